import { kindClass } from "../lib/timeline";

export type KindLegendProps = { kinds: string[] };

/** Which colour is which kind, for the kinds on screen. */
export function KindLegend({ kinds }: KindLegendProps) {
  if (kinds.length === 0) return null;
  return (
    <ul className="legend" aria-label="Dot colours by kind">
      {kinds.map((kind) => (
        <li key={kind}>
          <svg width="10" height="10" aria-hidden="true">
            <circle cx="5" cy="5" r="4.5" className={`dot ${kindClass(kind)}`} />
          </svg>
          {kind}
        </li>
      ))}
      <li className="muted">dot size: length</li>
    </ul>
  );
}
