import { describe, expect, it } from "vitest";
import { memory, preference } from "../test/fixtures";
import {
  confidenceLabel,
  countPreferences,
  evidenceLabel,
  orderTier,
  replacementOf,
  tierSections,
} from "./preferences";

describe("preferences", () => {
  const older = preference({
    memory: memory({ id: 53, content: "per IP" }),
    superseded_by: 54,
    confidence: 0.95,
  });
  const newer = preference({ memory: memory({ id: 54, content: "per API key" }), confidence: 0.9 });
  const weak = preference({
    memory: memory({ id: 60 }),
    tier: "signals",
    confidence: 0.405,
    confidence_percent: 41,
    evidence_sessions: 2,
  });
  const tiers = { explicit: [older, newer], signals: [weak], inferred: [] };

  it("orders tiers explicit, signals, inferred", () => {
    expect(tierSections(tiers).map((s) => s.tier)).toEqual(["explicit", "signals", "inferred"]);
    expect(countPreferences(tiers)).toBe(3);
  });

  it("puts superseded preferences last whatever their confidence", () => {
    expect(orderTier([older, newer]).map((p) => p.memory.id)).toEqual([54, 53]);
  });

  it("finds what replaced a superseded preference", () => {
    expect(replacementOf(older, tiers)?.memory.content).toBe("per API key");
    expect(replacementOf(newer, tiers)).toBeUndefined();
  });

  it("words confidence and evidence", () => {
    expect(confidenceLabel(weak)).toBe("41%");
    expect(confidenceLabel(preference({ confidence: 0.415, confidence_percent: 42 }))).toBe("42%");
    expect(evidenceLabel(weak)).toBe("seen in 2 sessions");
    expect(evidenceLabel(newer)).toBe("no session evidence yet");
  });
});
