// What the server reports it did, in words: the UI shows this rather than assuming success.

import type { UpdateOutcome } from "../types";

export type Outcome = { tone: "ok" | "warn"; text: string; canForce: boolean };

export function describeUpdate(outcome: UpdateOutcome): Outcome {
  const similar = outcome.similar;
  const redacted =
    outcome.redacted > 0
      ? ` ${outcome.redacted} secret${outcome.redacted === 1 ? " was" : "s were"} redacted.`
      : "";
  switch (outcome.status) {
    case "updated":
      return { tone: "ok", text: `Saved.${redacted}`, canForce: false };
    case "unchanged":
      return { tone: "ok", text: "Nothing changed.", canForce: false };
    case "duplicate":
      return {
        tone: "warn",
        text: `Not saved: memory #${similar?.id ?? "?"} already has exactly this content.`,
        canForce: false,
      };
    case "noop":
      return {
        tone: "warn",
        text: similar
          ? `Not saved: it says the same as memory #${similar.id} (similarity ${similar.similarity.toFixed(2)}).`
          : "Not saved: it says the same as another memory.",
        canForce: true,
      };
    case "recorded":
      return {
        tone: "ok",
        text: `Recorded the code's current value as memory #${outcome.memory.id}.${redacted}`,
        canForce: false,
      };
  }
}
