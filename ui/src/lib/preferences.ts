// The preference dashboard's logic: tier order and wording, ordering inside a tier, and
// finding what replaced a superseded preference.

import {
  PREFERENCE_TIERS,
  type Preference,
  type PreferenceTier,
  type PreferenceTiers,
} from "../types";

export const TIER_INFO: Record<PreferenceTier, { title: string; description: string }> = {
  explicit: {
    title: "Explicit",
    description: "Said outright by you, or locked here. Agents follow these.",
  },
  signals: {
    title: "Signals",
    description: "Habits counted across sessions: corrections and repeated choices.",
  },
  inferred: {
    title: "Inferred",
    description:
      "A language model's reading of how you work. Lock the right ones, dismiss the rest.",
  },
};

export type TierSection = {
  tier: PreferenceTier;
  title: string;
  description: string;
  items: Preference[];
};

/** Live preferences first, by confidence then recency; superseded ones last. */
export function orderTier(items: Preference[]): Preference[] {
  return [...items].sort(
    (a, b) =>
      Number(a.superseded_by !== null) - Number(b.superseded_by !== null) ||
      b.confidence - a.confidence ||
      b.last_seen.localeCompare(a.last_seen),
  );
}

export function tierSections(tiers: PreferenceTiers): TierSection[] {
  return PREFERENCE_TIERS.map((tier) => ({
    tier,
    ...TIER_INFO[tier],
    items: orderTier(tiers[tier] ?? []),
  }));
}

/** The preference that replaced `item`, if it is among the ones loaded. */
export function replacementOf(item: Preference, tiers: PreferenceTiers): Preference | undefined {
  if (item.superseded_by === null) return undefined;
  for (const tier of PREFERENCE_TIERS) {
    const found = tiers[tier]?.find((other) => other.memory.id === item.superseded_by);
    if (found) return found;
  }
  return undefined;
}

/** The server's percent, shown as it is: rounding here could disagree with other views. */
export function confidenceLabel(item: Preference): string {
  return `${item.confidence_percent}%`;
}

export function evidenceLabel(item: Preference): string {
  const sessions = item.evidence_sessions;
  return sessions === 0
    ? "no session evidence yet"
    : `seen in ${sessions} session${sessions === 1 ? "" : "s"}`;
}

export function countPreferences(tiers: PreferenceTiers): number {
  return PREFERENCE_TIERS.reduce((sum, tier) => sum + (tiers[tier]?.length ?? 0), 0);
}
