import { type KeyboardEvent, memo, useState } from "react";
import { formatDateTime } from "../lib/format";
import { AXIS_HEIGHT, type DotLayout, kindClass, type TimelineLayout } from "../lib/timeline";

export type TimelineRiverProps = {
  layout: TimelineLayout;
  selectedId: number | null;
  onSelect: (id: number) => void;
};

export function dotLabel(dot: DotLayout): string {
  const title = dot.title.trim() || "(empty)";
  return `${title} — ${dot.project || "(no project)"}, ${dot.kind}, ${formatDateTime(dot.createdAt)}`;
}

/**
 * The river: one lane per project, the smoothed per-day counts as a band, and the memories as
 * dots on it. Dots are one tab stop: arrow keys move between them in time order, Enter or
 * Space opens one.
 */
export function TimelineRiver({ layout, selectedId, onSelect }: TimelineRiverProps) {
  const { width, height, lanes, ticks } = layout;
  return (
    <svg
      className="river"
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      role="group"
      aria-label={`Timeline: ${layout.dots.length} memories in ${lanes.length} lanes`}
    >
      <g className="river-axis" aria-hidden="true">
        {ticks.map((tick) => (
          <g key={`${tick.x}-${tick.label}`}>
            <line x1={tick.x} x2={tick.x} y1={AXIS_HEIGHT - 6} y2={height - 4} />
            <text x={tick.x + 4} y={14}>
              {tick.label}
            </text>
          </g>
        ))}
      </g>
      {lanes.map((lane, index) => (
        <g key={lane.key} className="lane" aria-hidden="true">
          <rect
            className={index % 2 ? "lane-band lane-band-odd" : "lane-band"}
            x={0}
            y={lane.top}
            width={width}
            height={lane.height}
          />
          {lane.bed && (
            <line
              className="river-bed"
              x1={lane.bed.x1}
              x2={lane.bed.x2}
              y1={lane.center}
              y2={lane.center}
            />
          )}
          {lane.river && <path className="river-path" d={lane.river} />}
          <text className="lane-label" x={8} y={lane.top + 14}>
            {lane.label} · {lane.total}
          </text>
        </g>
      ))}
      <Dots dots={layout.dots} selectedId={selectedId} onSelect={onSelect} />
    </svg>
  );
}

type DotsProps = { dots: DotLayout[]; selectedId: number | null; onSelect: (id: number) => void };

const Dots = memo(function Dots({ dots, selectedId, onSelect }: DotsProps) {
  const selectedIndex = selectedId === null ? -1 : dots.findIndex((dot) => dot.id === selectedId);
  const [active, setActive] = useState<number | null>(null);
  const stop =
    active !== null && active < dots.length
      ? active
      : selectedIndex >= 0
        ? selectedIndex
        : dots.length - 1;

  function indexOf(target: EventTarget): number | null {
    const element = (target as Element).closest?.("[data-index]");
    const raw = element?.getAttribute("data-index");
    return raw == null ? null : Number(raw);
  }

  function focusDot(container: Element, index: number) {
    const clamped = Math.min(dots.length - 1, Math.max(0, index));
    setActive(clamped);
    container.querySelector<SVGElement>(`[data-index="${clamped}"]`)?.focus();
  }

  function onKeyDown(event: KeyboardEvent<SVGGElement>) {
    const index = indexOf(event.target);
    if (index === null) return;
    const dot = dots[index];
    const moves: Record<string, number> = {
      ArrowRight: index + 1,
      ArrowDown: index + 1,
      ArrowLeft: index - 1,
      ArrowUp: index - 1,
      Home: 0,
      End: dots.length - 1,
      PageDown: index + 10,
      PageUp: index - 10,
    };
    if (event.key in moves) {
      event.preventDefault();
      focusDot(event.currentTarget, moves[event.key]!);
    } else if ((event.key === "Enter" || event.key === " ") && dot) {
      event.preventDefault();
      onSelect(dot.id);
    }
  }

  return (
    <g
      className="dots"
      onKeyDown={onKeyDown}
      onClick={(event) => {
        const index = indexOf(event.target);
        const dot = index === null ? undefined : dots[index];
        if (dot) {
          setActive(index);
          onSelect(dot.id);
        }
      }}
    >
      {dots.map((dot, index) => (
        <Dot
          key={dot.id}
          dot={dot}
          index={index}
          selected={dot.id === selectedId}
          tabStop={index === stop}
        />
      ))}
    </g>
  );
});

type DotProps = { dot: DotLayout; index: number; selected: boolean; tabStop: boolean };

/** One memory; memoised so selecting or focusing a dot re-renders two dots, not thousands. */
const Dot = memo(function Dot({ dot, index, selected, tabStop }: DotProps) {
  const label = dotLabel(dot);
  return (
    <circle
      data-index={index}
      data-id={dot.id}
      className={`dot ${kindClass(dot.kind)}${selected ? " is-selected" : ""}`}
      cx={dot.x}
      cy={dot.y}
      r={dot.r}
      tabIndex={tabStop ? 0 : -1}
      role="button"
      aria-label={label}
      aria-pressed={selected}
    >
      <title>{label}</title>
    </circle>
  );
});
