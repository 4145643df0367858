import type { TierSection } from "../lib/preferences";
import { replacementOf } from "../lib/preferences";
import type { Preference, PreferenceTiers } from "../types";
import { PreferenceCard } from "./PreferenceCard";

export type PreferenceTierSectionProps = {
  section: TierSection;
  tiers: PreferenceTiers;
  busy: boolean;
  onOpen: (id: number) => void;
  onLock: (item: Preference) => void;
  onDismiss: (item: Preference) => void;
};

export function PreferenceTierSection({
  section,
  tiers,
  busy,
  onOpen,
  onLock,
  onDismiss,
}: PreferenceTierSectionProps) {
  const headingId = `tier-${section.tier}`;
  return (
    <section className={`tier tier-${section.tier}`} aria-labelledby={headingId}>
      <h2 id={headingId}>
        {section.title} <span className="count">{section.items.length}</span>
      </h2>
      <p className="tier-description">{section.description}</p>
      {section.items.length === 0 ? (
        <p className="muted tier-empty">None yet.</p>
      ) : (
        <ul className="preference-list">
          {section.items.map((item) => (
            <PreferenceCard
              key={item.memory.id}
              item={item}
              replacement={replacementOf(item, tiers)}
              busy={busy}
              onOpen={onOpen}
              onLock={onLock}
              onDismiss={onDismiss}
            />
          ))}
        </ul>
      )}
    </section>
  );
}
