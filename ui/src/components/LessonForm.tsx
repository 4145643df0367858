import { type FormEvent, useState } from "react";
import { errorMessage } from "../api";
import type { ProjectChoice } from "../lib/projects";
import type { LessonStrictness, NewLesson } from "../types";
import { ErrorNotice } from "./ErrorNotice";

export type LessonFormProps = {
  projects: ProjectChoice[];
  /** The project a new lesson is for unless changed; "" for every project. */
  project: string;
  /** Stores the lesson; a rejection (a bad pattern) is shown in the form, fields kept. */
  onAdd: (lesson: NewLesson) => Promise<void>;
};

/** Add a lesson by hand: the message, the pattern to look for, and where it applies. */
export function LessonForm({ projects, project: initialProject, onAdd }: LessonFormProps) {
  const [message, setMessage] = useState("");
  const [pattern, setPattern] = useState("");
  const [tool, setTool] = useState("");
  const [project, setProject] = useState(initialProject);
  const [strictness, setStrictness] = useState<LessonStrictness>("warn");
  const [saving, setSaving] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setSaving(true);
    setFailure(null);
    try {
      await onAdd({ message, pattern, tool: tool.trim(), project, strictness, origin: "user" });
      setMessage("");
      setPattern("");
      setTool("");
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setSaving(false);
    }
  }

  return (
    <form className="lesson-form" onSubmit={submit} aria-label="Add a lesson">
      <h3>Add a lesson</h3>
      <label className="field">
        <span>Message: what the agent should know or do instead</span>
        <input
          type="text"
          value={message}
          placeholder="Don't run load tests against staging: use the local stack."
          onChange={(event) => setMessage(event.target.value)}
          required
        />
      </label>
      <div className="lesson-form-row">
        <label className="field">
          <span>Pattern (regular expression, any case)</span>
          <input
            type="text"
            className="mono"
            value={pattern}
            placeholder="staging"
            onChange={(event) => setPattern(event.target.value)}
            required
          />
        </label>
        <label className="field">
          <span>Tool</span>
          <input
            type="text"
            value={tool}
            placeholder="any tool (Bash, Edit, Write…)"
            onChange={(event) => setTool(event.target.value)}
          />
        </label>
        <label className="field">
          <span>Project</span>
          <select value={project} onChange={(event) => setProject(event.target.value)}>
            <option value="">all projects</option>
            {projects.map((choice) => (
              <option key={choice.project} value={choice.project}>
                {choice.project}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>When it matches</span>
          <select
            value={strictness}
            onChange={(event) => setStrictness(event.target.value as LessonStrictness)}
          >
            <option value="warn">warn the agent</option>
            <option value="ask">ask me first</option>
          </select>
        </label>
      </div>
      {failure && <ErrorNotice message={failure} />}
      <div className="row-actions">
        <button
          type="submit"
          className="button button-primary"
          disabled={saving || !message.trim() || !pattern.trim()}
        >
          {saving ? "Adding…" : "Add lesson"}
        </button>
      </div>
    </form>
  );
}
