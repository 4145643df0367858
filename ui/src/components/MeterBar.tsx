export type MeterBarProps = {
  /** 0..1: how full the bar is drawn. */
  fraction: number;
  /** The number shown beside the bar, as the user should read it. */
  label: string;
  /** What the number is, for assistive technology and the tooltip. */
  name: string;
};

/** A small horizontal bar with its number: search scores and preference confidence. */
export function MeterBar({ fraction, label, name }: MeterBarProps) {
  const clamped = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  return (
    <span className="meter" title={`${name}: ${label}`}>
      <span
        className="meter-track"
        role="meter"
        aria-label={name}
        aria-valuemin={0}
        aria-valuemax={1}
        aria-valuenow={Math.round(clamped * 1000) / 1000}
        aria-valuetext={label}
      >
        <span className="meter-fill" style={{ width: `${clamped * 100}%` }} />
      </span>
      <span className="meter-value">{label}</span>
    </span>
  );
}
