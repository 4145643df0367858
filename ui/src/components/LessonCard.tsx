import { formatDate } from "../lib/format";
import type { Lesson } from "../types";

export type LessonCardProps = {
  lesson: Lesson;
  busy: boolean;
  onToggle: (lesson: Lesson) => void;
};

/** One lesson: what the agent is told, before which calls, and disable / enable. */
export function LessonCard({ lesson, busy, onToggle }: LessonCardProps) {
  const asks = lesson.strictness === "ask";
  return (
    <li className={`lesson${lesson.active ? "" : " is-inactive"}`}>
      <p className="lesson-message">
        {lesson.message}
        <span className={`badge ${asks ? "badge-danger" : "badge-warn"} lesson-strictness`}>
          {asks ? "asks first" : "warn"}
        </span>
        {!lesson.active && <span className="badge lesson-disabled">disabled</span>}
      </p>
      <div className="lesson-facts">
        <span>
          before <span className="lesson-tool">{lesson.tool || "any tool"}</span> calls matching{" "}
          <code className="lesson-pattern">{lesson.pattern}</code>
        </span>
        <span className="lesson-project">{lesson.project || "all projects"}</span>
        <span className="lesson-origin">from {lesson.origin}</span>
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
          {lesson.active ? "Disable" : "Enable"}
        </button>
      </div>
    </li>
  );
}
