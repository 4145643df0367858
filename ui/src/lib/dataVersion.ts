// A counter every write bumps, so views that read server data load it again afterwards
// (the server's own cache is cleared by the write; this is the UI's side of it).

import { useSyncExternalStore } from "react";

let version = 0;
const listeners = new Set<() => void>();

export function bumpData(): void {
  version += 1;
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useDataVersion(): number {
  return useSyncExternalStore(
    subscribe,
    () => version,
    () => version,
  );
}
