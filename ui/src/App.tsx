import { useEffect } from "react";
import { getSessions, getStats } from "./api";
import { DetailPane } from "./components/DetailPane";
import { ErrorBoundary } from "./components/ErrorBoundary";
import { Header } from "./components/Header";
import { StatStrip } from "./components/StatStrip";
import { TokenDialog } from "./components/TokenDialog";
import { loadAgents } from "./lib/agents";
import { idParam, navigate, type Route, routePath, useLocation } from "./lib/router";
import { focusSearchBox, isSearchShortcut } from "./lib/shortcuts";
import { useApi } from "./lib/useApi";
import { useHealth } from "./lib/useHealth";
import { ContextPage } from "./pages/ContextPage";
import { DriftedPage } from "./pages/DriftedPage";
import { InstructionsPage } from "./pages/InstructionsPage";
import { LessonsPage } from "./pages/LessonsPage";
import { MemoryPage } from "./pages/MemoryPage";
import { NotFoundPage } from "./pages/NotFoundPage";
import { PreferencesPage } from "./pages/PreferencesPage";
import { SearchPage } from "./pages/SearchPage";
import { SessionsPage } from "./pages/SessionsPage";
import { SettingsPage } from "./pages/SettingsPage";
import { TimelinePage } from "./pages/TimelinePage";

const TITLES: Record<Route["name"], string> = {
  timeline: "Timeline",
  search: "Search",
  memory: "Memory",
  preferences: "Preferences",
  lessons: "Lessons",
  sessions: "Sessions",
  context: "Context",
  drifted: "Drifted",
  instructions: "Instructions",
  settings: "Settings",
  "not-found": "Not found",
};

/** Views that show a selected memory (?memory=ID) in a pane beside them. */
const WITH_PANE = new Set<Route["name"]>(["timeline", "search", "sessions"]);

function page(route: Route, params: URLSearchParams) {
  switch (route.name) {
    case "timeline":
      return <TimelinePage params={params} />;
    case "search":
      return <SearchPage params={params} />;
    case "memory":
      return <MemoryPage id={route.id} />;
    case "preferences":
      return <PreferencesPage params={params} />;
    case "lessons":
      return <LessonsPage params={params} />;
    case "sessions":
      return <SessionsPage params={params} />;
    case "context":
      return <ContextPage params={params} />;
    case "drifted":
      return <DriftedPage params={params} />;
    case "instructions":
      return <InstructionsPage params={params} />;
    case "settings":
      return <SettingsPage />;
    case "not-found":
      return <NotFoundPage path={route.path} />;
  }
}

function useSearchShortcut() {
  useEffect(() => {
    function onKeyDown(event: KeyboardEvent) {
      if (!isSearchShortcut(event)) return;
      event.preventDefault();
      if (!focusSearchBox()) navigate(routePath({ name: "search" }));
    }
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  }, []);
}

function useAgentLabels() {
  useEffect(() => {
    const controller = new AbortController();
    void loadAgents(controller.signal);
    return () => controller.abort();
  }, []);
}

export function App() {
  useAgentLabels();
  const { route, params } = useLocation();
  const health = useHealth();
  const stats = useApi("stats", (signal) => getStats(signal), { keepPrevious: true });
  const sessions = useApi(
    "sessions-total",
    (signal) => getSessions({ limit: 1, offset: 0 }, signal),
    {
      keepPrevious: true,
    },
  );
  useSearchShortcut();

  useEffect(() => {
    document.title = `${TITLES[route.name]} · claude-memory`;
  }, [route.name]);

  const selected = WITH_PANE.has(route.name) ? idParam(params) : null;
  return (
    <>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <Header current={route.name} health={health} memoryCount={stats.data?.active} />
      <StatStrip stats={stats.data} sessions={sessions.data} error={stats.error} />
      <div className={selected === null ? "workspace" : "workspace has-pane"}>
        <main id="main" tabIndex={-1}>
          <ErrorBoundary resetKey={route.name}>{page(route, params)}</ErrorBoundary>
        </main>
        {selected !== null && (
          <ErrorBoundary resetKey={String(selected)}>
            <DetailPane id={selected} />
          </ErrorBoundary>
        )}
      </div>
      <TokenDialog />
    </>
  );
}
