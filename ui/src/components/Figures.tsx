/** A figure at a glance: its label, its value, and what it counts (shown on hover). */
export type Figure = { label: string; value: string; title?: string };

export type FiguresProps = { figures: Figure[] };

/** A row of figures (the statistics strip, the Context page's totals). */
export function Figures({ figures }: FiguresProps) {
  return (
    <dl className="stats">
      {figures.map((figure) => (
        <div className="stat" key={figure.label} title={figure.title}>
          <dt>{figure.label}</dt>
          <dd>{figure.value}</dd>
        </div>
      ))}
    </dl>
  );
}
