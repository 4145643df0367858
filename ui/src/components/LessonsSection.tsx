import type { ProjectChoice } from "../lib/projects";
import type { Lesson, NewLesson } from "../types";
import { EmptyState } from "./EmptyState";
import { ErrorNotice } from "./ErrorNotice";
import { LessonCard } from "./LessonCard";
import { LessonForm } from "./LessonForm";
import { LoadingNotice } from "./LoadingNotice";

export type LessonsSectionProps = {
  lessons: Lesson[] | undefined;
  error: string | null;
  onRetry: () => void;
  busy: boolean;
  projects: ProjectChoice[];
  /** The page's project filter, the default project of a new lesson. */
  project: string;
  onToggle: (lesson: Lesson) => void;
  /** Disable a proposed lesson: the user does not want it. */
  onDismiss: (lesson: Lesson) => void;
  onAdd: (lesson: NewLesson) => Promise<void>;
};

/**
 * The Lessons page's body: the lessons agents are reminded of before matching tool calls, each
 * to accept, dismiss, disable or enable, and a form to add one.
 */
export function LessonsSection({
  lessons,
  error,
  onRetry,
  busy,
  projects,
  project,
  onToggle,
  onDismiss,
  onAdd,
}: LessonsSectionProps) {
  return (
    <div className="lessons">
      {error && <ErrorNotice message={error} onRetry={onRetry} />}
      {!lessons && !error && <LoadingNotice label="Loading lessons…" />}
      {lessons && lessons.length === 0 && (
        <EmptyState title="No lessons yet.">
          <p>
            A lesson is a reminder shown to the agent before a matching tool call, such as “don't
            run load tests against staging: use the local stack”. Agents add them, and so does{" "}
            <code>claude-memory lessons add</code>; or add one below.
          </p>
        </EmptyState>
      )}
      {lessons && lessons.length > 0 && (
        <ul className="lesson-list">
          {lessons.map((lesson) => (
            <LessonCard
              key={lesson.id}
              lesson={lesson}
              busy={busy}
              onToggle={onToggle}
              onDismiss={onDismiss}
            />
          ))}
        </ul>
      )}
      <LessonForm key={project} projects={projects} project={project} onAdd={onAdd} />
    </div>
  );
}
