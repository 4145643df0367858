import { formatCount } from "../lib/format";
import { projectChoices } from "../lib/projects";
import type { ProjectSummary } from "../types";
import { SelectField } from "./SelectField";

export type ProjectFieldProps = {
  projects: ProjectSummary[] | undefined;
  value: string;
  onChange: (value: string) => void;
  /** The first choice, the empty value: "all projects", "choose a project…". */
  emptyLabel: string;
  /** Show each project's memory count beside its name. */
  withCounts?: boolean;
};

/** The project chooser the pages share: one choice per project name, the busiest first. */
export function ProjectField({
  projects,
  value,
  onChange,
  emptyLabel,
  withCounts = false,
}: ProjectFieldProps) {
  return (
    <SelectField label="Project" value={value} onChange={onChange}>
      <option value="">{emptyLabel}</option>
      {projectChoices(projects).map((choice) => (
        <option key={choice.project} value={choice.project}>
          {withCounts ? `${choice.project} (${formatCount(choice.count)})` : choice.project}
        </option>
      ))}
    </SelectField>
  );
}
