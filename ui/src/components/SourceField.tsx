import { sourceChoices, useSourceLabel } from "../lib/agents";
import { SelectField } from "./SelectField";

export type SourceFieldProps = {
  /** How many memories or sessions each source has: the choices offered. */
  counts: Record<string, number> | undefined;
  value: string;
  onChange: (value: string) => void;
};

/** The "From" filter: one agent (Claude Code, Codex CLI, Gemini CLI...) or any way in. */
export function SourceField({ counts, value, onChange }: SourceFieldProps) {
  const sourceLabel = useSourceLabel();
  return (
    <SelectField label="From" value={value} onChange={onChange}>
      <option value="">every agent</option>
      {sourceChoices(counts, value, sourceLabel).map((choice) => (
        <option key={choice.value} value={choice.value}>
          {choice.label}
        </option>
      ))}
    </SelectField>
  );
}
