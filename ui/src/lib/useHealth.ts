// Polls /health: the database's state and the measured round trip, every `intervalMs`.

import { useEffect, useState } from "react";
import { errorMessage, getHealth, isAbort, type HealthReading } from "../api";

export const HEALTH_INTERVAL_MS = 15_000;

export type HealthState = { reading: HealthReading | null; error: string | null };

export function useHealth(intervalMs = HEALTH_INTERVAL_MS): HealthState {
  const [state, setState] = useState<HealthState>({ reading: null, error: null });

  useEffect(() => {
    let controller = new AbortController();
    async function check() {
      controller.abort();
      controller = new AbortController();
      try {
        const reading = await getHealth(controller.signal);
        setState({ reading, error: null });
      } catch (failure) {
        if (!isAbort(failure)) setState({ reading: null, error: errorMessage(failure) });
      }
    }
    void check();
    const timer = window.setInterval(check, intervalMs);
    return () => {
      window.clearInterval(timer);
      controller.abort();
    };
  }, [intervalMs]);

  return state;
}
