import { useEffect, useMemo, useState } from "react";
import { getProjects, getStats, searchMemories } from "../api";
import { ProjectField } from "../components/ProjectField";
import { EmptyState } from "../components/EmptyState";
import { ErrorNotice } from "../components/ErrorNotice";
import { FilterChips } from "../components/FilterChips";
import { SearchResultItem } from "../components/SearchResultItem";
import { SelectField } from "../components/SelectField";
import { SourceField } from "../components/SourceField";
import { queryTerms } from "../lib/highlight";
import { idParam, setParams } from "../lib/router";
import { bestScore, noResultHints, searchRequest, searchStateFrom } from "../lib/search";
import { SEARCH_BOX_ID, searchShortcutLabel } from "../lib/shortcuts";
import { useApi } from "../lib/useApi";
import { MEMORY_KINDS, SEARCH_MODES } from "../types";

const TYPING_PAUSE_MS = 300;

const MODE_HELP: Record<string, string> = {
  semantic: "by meaning",
  keyword: "exact words and identifiers",
  hybrid: "both, fused",
};

export type SearchPageProps = { params: URLSearchParams };

export function SearchPage({ params }: SearchPageProps) {
  const state = searchStateFrom(params);
  const selectedId = idParam(params);
  const [text, setText] = useState(state.query);

  // The box follows the URL (back/forward); typing updates the URL after a short pause.
  useEffect(() => setText(state.query), [state.query]);
  useEffect(() => {
    if (text === state.query) return;
    const timer = window.setTimeout(() => setParams({ q: text || null }), TYPING_PAUSE_MS);
    return () => window.clearTimeout(timer);
  }, [text, state.query]);

  const request = searchRequest(state);
  const requestKey = request ? JSON.stringify(request) : null;
  const results = useApi(requestKey, (signal) => searchMemories(request!, signal), {
    keepPrevious: true,
  });
  const projects = useApi("projects", (signal) => getProjects(signal));
  const stats = useApi("stats", (signal) => getStats(signal), { keepPrevious: true });
  const terms = useMemo(() => queryTerms(state.query), [state.query]);
  const hits = request ? results.data?.hits : undefined;

  return (
    <section className="page search-page" aria-labelledby="search-title">
      <div className="page-head">
        <h1 id="search-title">Search</h1>
      </div>
      <form
        className="search-form"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setParams({ q: text || null });
        }}
      >
        <label className="search-label" htmlFor={SEARCH_BOX_ID}>
          Search memories
        </label>
        <div className="search-row">
          <input
            id={SEARCH_BOX_ID}
            className="search-input"
            type="search"
            value={text}
            placeholder="pnpm, pagination cursor, ERR_POOL_TIMEOUT…"
            autoComplete="off"
            spellCheck={false}
            autoFocus
            aria-describedby="search-shortcut"
            onChange={(event) => setText(event.target.value)}
          />
          <kbd
            id="search-shortcut"
            className="search-shortcut"
            title="Focus the search box from anywhere"
          >
            {searchShortcutLabel()}
          </kbd>
        </div>
      </form>
      <div className="toolbar">
        <FilterChips
          label="Mode"
          options={SEARCH_MODES.map((mode) => ({ value: mode, label: mode }))}
          value={state.mode}
          onChange={(mode) => setParams({ mode })}
        />
        <span className="muted mode-help">{MODE_HELP[state.mode]}</span>
      </div>
      <div className="toolbar">
        <ProjectField
          projects={projects.data}
          value={state.project}
          onChange={(value) => setParams({ project: value || null })}
          emptyLabel="all projects"
        />
        <SelectField
          label="Kind"
          value={state.kind}
          onChange={(value) => setParams({ kind: value || null })}
        >
          <option value="">all kinds</option>
          {MEMORY_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {kind}
            </option>
          ))}
        </SelectField>
        <SourceField
          counts={stats.data?.by_source}
          value={state.source}
          onChange={(value) => setParams({ source: value || null })}
        />
        <label
          className="field field-inline slider"
          title={state.mode === "keyword" ? "Keyword search does not use similarity" : undefined}
        >
          <span>Min. similarity</span>
          <input
            type="range"
            min={0}
            max={1}
            step={0.05}
            value={state.minSimilarity}
            disabled={state.mode === "keyword"}
            onChange={(event) => setParams({ min: event.target.value })}
          />
          <output className="mono">{state.minSimilarity.toFixed(2)}</output>
        </label>
      </div>

      {results.error && <ErrorNotice message={results.error} onRetry={results.reload} />}
      {!request && (
        <EmptyState title="Search everything your agents remembered.">
          <p>
            Type a question or a few words. <strong>Semantic</strong> finds memories by meaning
            (“which package manager?”), <strong>keyword</strong> finds exact words and identifiers (
            <code>ERR_POOL_TIMEOUT</code>, <code>--frozen-lockfile</code>), <strong>hybrid</strong>{" "}
            does both.
          </p>
        </EmptyState>
      )}
      {request && results.loading && (
        <p className="muted" role="status">
          Searching…
        </p>
      )}
      {request && hits && hits.length === 0 && !results.loading && (
        <EmptyState title={`No memories matched “${state.query}”.`}>
          <ul>
            {noResultHints(state).map((hint) => (
              <li key={hint}>{hint}</li>
            ))}
          </ul>
        </EmptyState>
      )}
      {request && hits && hits.length > 0 && (
        <>
          <p className="page-summary" role="status">
            {hits.length} {hits.length === 1 ? "result" : "results"} · {state.mode} ·{" "}
            {results.data!.took_ms.toFixed(0)} ms
          </p>
          <ol className="results" aria-label="Search results">
            {hits.map((hit) => (
              <SearchResultItem
                key={hit.id}
                hit={hit}
                mode={results.data!.mode}
                best={bestScore(hits)}
                terms={terms}
                selected={hit.id === selectedId}
                onOpen={(id) => setParams({ memory: String(id) }, { replace: false })}
              />
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
