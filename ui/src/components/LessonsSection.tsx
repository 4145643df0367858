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

/** The lessons agents are reminded of before matching tool calls, and a form to add one. */
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
    <section className="lessons" aria-label="Lessons">
      <h2>Lessons {lessons && <span className="count">{lessons.length}</span>}</h2>
      <p className="tier-description">
        Reminders an agent gets before a tool call whose input matches the pattern. A lesson that
        asks first also makes Claude Code ask you before the call runs. Proposed lessons come from
        your corrections in past sessions (<code>claude-memory lessons propose</code>); none applies
        until you accept it.
      </p>
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
    </section>
  );
}
