// One hook for reading server data: loading, error and data states, aborting the previous
// request when the inputs change, and loading again after any write (see dataVersion).

import { useCallback, useEffect, useRef, useState } from "react";
import { errorMessage, isAbort } from "../api";
import { useDataVersion } from "./dataVersion";

export type ApiState<T> = {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
};

/**
 * Run `load` now and whenever `key` changes (a string naming the inputs). A `key` of null
 * means "nothing to load": data is cleared and no request is made. With `keepPrevious`, the
 * last data stays shown while the next key loads (search results while typing).
 */
export function useApi<T>(
  key: string | null,
  load: (signal: AbortSignal) => Promise<T>,
  options: { keepPrevious?: boolean } = {},
): ApiState<T> {
  const keepPrevious = options.keepPrevious ?? false;
  const version = useDataVersion();
  const [reloads, setReloads] = useState(0);
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(key !== null);
  const loadRef = useRef(load);
  loadRef.current = load;
  const lastKey = useRef<string | null>(null);

  useEffect(() => {
    if (key === null) {
      setData(undefined);
      setError(null);
      setLoading(false);
      lastKey.current = null;
      return;
    }
    if (lastKey.current !== key && !keepPrevious) setData(undefined);
    lastKey.current = key;
    const controller = new AbortController();
    setLoading(true);
    setError(null);
    loadRef.current(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setLoading(false);
      },
      (failure: unknown) => {
        if (controller.signal.aborted || isAbort(failure)) return;
        setError(errorMessage(failure));
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [key, version, reloads, keepPrevious]);

  const reload = useCallback(() => setReloads((n) => n + 1), []);
  return { data, error, loading, reload };
}
