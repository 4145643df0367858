import { useState } from "react";
import { addLesson, errorMessage, getLessons, getProjects, setLessonActive } from "../api";
import { ErrorNotice } from "../components/ErrorNotice";
import { LessonsSection } from "../components/LessonsSection";
import { ProjectField } from "../components/ProjectField";
import { bumpData } from "../lib/dataVersion";
import { firstLine } from "../lib/format";
import { projectChoices } from "../lib/projects";
import { setParams } from "../lib/router";
import { useApi } from "../lib/useApi";
import type { Lesson, NewLesson } from "../types";

export type LessonsPageProps = { params: URLSearchParams };

/**
 * The lessons agents are reminded of before matching tool calls: list them, accept or dismiss
 * a proposed one, disable or enable one, and add one (for a project, or for all).
 */
export function LessonsPage({ params }: LessonsPageProps) {
  const project = params.get("project") ?? "";
  const lessons = useApi(`lessons:${project}`, (signal) =>
    getLessons(project || undefined, signal),
  );
  const projects = useApi("projects", (signal) => getProjects(signal));
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  async function act(work: () => Promise<string>) {
    setBusy(true);
    setFailure(null);
    setMessage(null);
    try {
      setMessage(await work());
      bumpData();
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  const toggle = (lesson: Lesson) =>
    act(async () => {
      const changed = await setLessonActive(lesson.id, !lesson.active);
      const what = `the lesson “${firstLine(changed.message, 60)}”`;
      if (lesson.proposed) return `Accepted ${what}: agents see it before matching calls.`;
      return changed.active ? `Enabled ${what}.` : `Disabled ${what}: agents no longer see it.`;
    });
  const dismiss = (lesson: Lesson) =>
    act(async () => {
      const changed = await setLessonActive(lesson.id, false);
      return `Dismissed the proposed lesson “${firstLine(changed.message, 60)}”.`;
    });
  // The form shows its own failure (a bad pattern) next to the fields it is about.
  const add = async (draft: NewLesson) => {
    const added = await addLesson(draft);
    setFailure(null);
    setMessage(`Added the lesson “${firstLine(added.message, 60)}”.`);
    bumpData();
  };

  return (
    <section className="page lessons-page" aria-labelledby="lessons-title">
      <div className="page-head">
        <h1 id="lessons-title">
          Lessons {lessons.data && <span className="count">{lessons.data.lessons.length}</span>}
        </h1>
        <ProjectField
          projects={projects.data}
          value={project}
          onChange={(value) => setParams({ project: value || null })}
          emptyLabel="all (general and every project)"
        />
      </div>
      <p className="page-intro">
        Reminders an agent gets before a tool call whose input matches the pattern. A lesson that
        asks first also makes Claude Code ask you before the call runs. Proposed lessons come from
        your corrections in past sessions (<code>claude-memory lessons propose</code>); none applies
        until you accept it.
      </p>
      {message && (
        <p className="notice notice-ok" role="status">
          {message}
        </p>
      )}
      {failure && <ErrorNotice message={failure} />}
      <LessonsSection
        lessons={lessons.data?.lessons}
        error={lessons.error}
        onRetry={lessons.reload}
        busy={busy}
        projects={projectChoices(projects.data)}
        project={project}
        onToggle={toggle}
        onDismiss={dismiss}
        onAdd={add}
      />
    </section>
  );
}
