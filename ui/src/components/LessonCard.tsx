import { formatDate } from "../lib/format";
import type { Lesson } from "../types";

export type LessonCardProps = {
  lesson: Lesson;
  busy: boolean;
  onToggle: (lesson: Lesson) => void;
  onDismiss: (lesson: Lesson) => void;
};

const PROPOSAL_ORIGINS: Record<string, string> = {
  journal: "a failed call corrected in session",
  correction: "a correction in session",
};

/** Where a lesson came from: who wrote it, or the session a proposal was read from. */
export function originLabel(origin: string): string {
  const [kind, session] = origin.split(":", 2);
  const label = PROPOSAL_ORIGINS[kind ?? ""];
  return label && session ? `${label} ${session.slice(0, 8)}` : origin;
}

/** One lesson: what the agent is told, before which calls, and disable / enable; a proposal
 * (inactive until accepted) offers accept / dismiss instead. */
export function LessonCard({ lesson, busy, onToggle, onDismiss }: LessonCardProps) {
  const asks = lesson.strictness === "ask";
  return (
    <li className={`lesson${lesson.active ? "" : " is-inactive"}`}>
      <p className="lesson-message">
        {lesson.message}
        <span className={`badge ${asks ? "badge-danger" : "badge-warn"} lesson-strictness`}>
          {asks ? "asks first" : "warn"}
        </span>
        {lesson.proposed && <span className="badge badge-ok lesson-proposed">proposed</span>}
        {!lesson.active && !lesson.proposed && (
          <span className="badge lesson-disabled">disabled</span>
        )}
      </p>
      <div className="lesson-facts">
        <span>
          before <span className="lesson-tool">{lesson.tool || "any tool"}</span> calls matching{" "}
          <code className="lesson-pattern">{lesson.pattern}</code>
        </span>
        <span className="lesson-project">{lesson.project || "all projects"}</span>
        <span className="lesson-origin" title={lesson.origin}>
          from {originLabel(lesson.origin)}
        </span>
        <span>
          added <time dateTime={lesson.created_at}>{formatDate(lesson.created_at)}</time>
        </span>
      </div>
      <div className="row-actions">
        <button
          type="button"
          className="button button-small"
          disabled={busy}
          onClick={() => onToggle(lesson)}
        >
          {lesson.proposed ? "Accept" : lesson.active ? "Disable" : "Enable"}
        </button>
        {lesson.proposed && (
          <button
            type="button"
            className="button button-small"
            disabled={busy}
            onClick={() => onDismiss(lesson)}
          >
            Dismiss
          </button>
        )}
      </div>
    </li>
  );
}
