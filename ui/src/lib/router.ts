// A tiny router over the history API: the UI lives under /ui, and the server answers every
// /ui/... path with index.html, so these routes survive a reload.

import { useSyncExternalStore } from "react";

export const BASE = "/ui";

export type Route =
  | { name: "timeline" }
  | { name: "search" }
  | { name: "memory"; id: number }
  | { name: "preferences" }
  | { name: "lessons" }
  | { name: "sessions" }
  | { name: "context" }
  | { name: "drifted" }
  | { name: "instructions" }
  | { name: "settings" }
  | { name: "not-found"; path: string };

export type RouteName = Route["name"];

const SIMPLE: Record<string, Route> = {
  "": { name: "timeline" },
  timeline: { name: "timeline" },
  search: { name: "search" },
  preferences: { name: "preferences" },
  lessons: { name: "lessons" },
  sessions: { name: "sessions" },
  context: { name: "context" },
  drifted: { name: "drifted" },
  instructions: { name: "instructions" },
  settings: { name: "settings" },
};

/** The route for a pathname such as /ui/memories/42 (with or without a trailing slash). */
export function parseRoute(pathname: string): Route {
  let rest = pathname;
  if (rest === BASE || rest.startsWith(`${BASE}/`)) rest = rest.slice(BASE.length);
  const parts = rest.split("/").filter(Boolean);
  if (parts.length <= 1) {
    const simple = SIMPLE[parts[0] ?? ""];
    if (simple) return simple;
  }
  if (parts.length === 2 && parts[0] === "memories" && /^[1-9]\d{0,15}$/.test(parts[1] ?? "")) {
    return { name: "memory", id: Number(parts[1]) };
  }
  return { name: "not-found", path: pathname };
}

/** The pathname of a route; the inverse of parseRoute. */
export function routePath(route: Exclude<Route, { name: "not-found" }>): string {
  switch (route.name) {
    case "timeline":
      return `${BASE}/`;
    case "memory":
      return `${BASE}/memories/${route.id}`;
    default:
      return `${BASE}/${route.name}`;
  }
}

const NAVIGATE_EVENT = "claude-memory:navigate";

/** Go to `to` (a path with optional ?search) without reloading the page. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const current = window.location.pathname + window.location.search;
  if (to === current) return;
  if (options.replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  window.dispatchEvent(new Event(NAVIGATE_EVENT));
}

/** The current path with the given search params changed; null or "" removes a param. */
export function withParams(updates: Record<string, string | null | undefined>): string {
  const params = new URLSearchParams(window.location.search);
  for (const [name, value] of Object.entries(updates)) {
    if (value === null || value === undefined || value === "") params.delete(name);
    else params.set(name, value);
  }
  const search = params.toString();
  return window.location.pathname + (search ? `?${search}` : "");
}

/** Change search params of the current page; by default without a new history entry. */
export function setParams(
  updates: Record<string, string | null | undefined>,
  options: { replace?: boolean } = { replace: true },
): void {
  navigate(withParams(updates), options);
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener("popstate", onChange);
  window.addEventListener(NAVIGATE_EVENT, onChange);
  return () => {
    window.removeEventListener("popstate", onChange);
    window.removeEventListener(NAVIGATE_EVENT, onChange);
  };
}

const snapshot = () => window.location.pathname + window.location.search;

/** Re-renders on every navigation; returns the current path plus search. */
export function useLocationKey(): string {
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}

export type Location = { route: Route; params: URLSearchParams; pathname: string };

export function useLocation(): Location {
  const key = useLocationKey();
  const url = new URL(key, "http://local");
  return { route: parseRoute(url.pathname), params: url.searchParams, pathname: url.pathname };
}

/** Whether a click should be left to the browser (new tab, download, other button...). */
export function isModifiedClick(event: {
  button: number;
  metaKey: boolean;
  ctrlKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
  defaultPrevented: boolean;
}): boolean {
  return (
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey
  );
}

/** The memory id in a search param such as ?memory=42, or null when absent or not an id. */
export function idParam(params: URLSearchParams, name = "memory"): number | null {
  const raw = params.get(name);
  return raw && /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : null;
}
