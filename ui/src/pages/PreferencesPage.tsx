import { useState } from "react";
import { deleteMemory, errorMessage, getPreferences, getProjects, lockPreference } from "../api";
import { ProjectField } from "../components/ProjectField";
import { EmptyState } from "../components/EmptyState";
import { ErrorNotice } from "../components/ErrorNotice";
import { Link } from "../components/Link";
import { LoadingNotice } from "../components/LoadingNotice";
import { PreferenceTierSection } from "../components/PreferenceTierSection";
import { bumpData } from "../lib/dataVersion";
import { firstLine } from "../lib/format";
import { countPreferences, tierSections } from "../lib/preferences";
import { navigate, routePath, setParams } from "../lib/router";
import { useApi } from "../lib/useApi";
import type { Preference } from "../types";

export type PreferencesPageProps = { params: URLSearchParams };

export function PreferencesPage({ params }: PreferencesPageProps) {
  const project = params.get("project") ?? "";
  const preferences = useApi(`preferences:${project}`, (signal) =>
    getPreferences(project || undefined, signal),
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

  const lock = (item: Preference) =>
    act(async () => {
      await lockPreference(item.memory.id, true);
      return `Locked “${firstLine(item.memory.content, 60)}”: it is now explicit.`;
    });
  const dismiss = (item: Preference) =>
    act(async () => {
      await deleteMemory(item.memory.id);
      return `Dismissed “${firstLine(item.memory.content, 60)}”. Restore it from Settings → Deleted memories.`;
    });
  const open = (id: number) => navigate(routePath({ name: "memory", id }));

  const data = preferences.data;
  return (
    <section className="page preferences-page" aria-labelledby="preferences-title">
      <div className="page-head">
        <h1 id="preferences-title">Preferences</h1>
        <ProjectField
          projects={projects.data}
          value={project}
          onChange={(value) => setParams({ project: value || null })}
          emptyLabel="all (general and every project)"
        />
      </div>
      <p className="page-intro">
        How you like to work, as learned from your sessions. Agents get the explicit tier first. The
        reminders agents get before a tool call are on{" "}
        <Link href={routePath({ name: "lessons" })}>Lessons</Link>.
      </p>
      {message && (
        <p className="notice notice-ok" role="status">
          {message}
        </p>
      )}
      {failure && <ErrorNotice message={failure} />}
      {preferences.error && (
        <ErrorNotice message={preferences.error} onRetry={preferences.reload} />
      )}
      {!data && !preferences.error && <LoadingNotice label="Loading preferences…" />}
      {data && countPreferences(data) === 0 && (
        <EmptyState title="No preferences learned yet.">
          <p>
            Save one (kind <code>preference</code>), or run <code>claude-memory distill</code> and{" "}
            <code>claude-memory signals</code> over imported sessions.
          </p>
        </EmptyState>
      )}
      {data && countPreferences(data) > 0 && (
        <div className="tiers">
          {tierSections(data).map((section) => (
            <PreferenceTierSection
              key={section.tier}
              section={section}
              tiers={data}
              busy={busy}
              onOpen={open}
              onLock={lock}
              onDismiss={dismiss}
            />
          ))}
        </div>
      )}
    </section>
  );
}
