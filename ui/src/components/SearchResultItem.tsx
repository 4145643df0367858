import { useSourceLabel } from "../lib/agents";
import { formatDate } from "../lib/format";
import { hitSnippet, hitTitle, replacedByLabel, scoreView } from "../lib/search";
import type { SearchHit, SearchMode } from "../types";
import { Highlighted } from "./Highlighted";
import { KindBadge } from "./KindBadge";
import { MeterBar } from "./MeterBar";
import { OwnerNote } from "./OwnerNote";

export type SearchResultItemProps = {
  hit: SearchHit;
  mode: SearchMode;
  best: number;
  terms: string[];
  selected: boolean;
  onOpen: (id: number) => void;
};

export function SearchResultItem({
  hit,
  mode,
  best,
  terms,
  selected,
  onOpen,
}: SearchResultItemProps) {
  const sourceLabel = useSourceLabel();
  const score = scoreView(hit, mode, best);
  const body = hitSnippet(hit, terms);
  const replacedBy = replacedByLabel(hit);
  const classes = `result${selected ? " is-selected" : ""}${replacedBy ? " is-superseded" : ""}`;
  return (
    <li className={classes}>
      <div className="result-meta">
        <span className="result-project">{hit.project || "(no project)"}</span>
        <KindBadge kind={hit.kind} />
        <span className="result-source">{sourceLabel(hit.source)}</span>
        <OwnerNote owner={hit.owner} visibility={hit.visibility} separator="" />
        {replacedBy && hit.superseded_by !== null && (
          <button
            type="button"
            className="badge superseded-badge"
            title="A newer memory replaced this one: open it"
            onClick={() => onOpen(hit.superseded_by!)}
          >
            {replacedBy}
          </button>
        )}
        <time dateTime={hit.created_at}>{formatDate(hit.created_at)}</time>
        <span className="result-score" title={score.detail}>
          <MeterBar fraction={score.fraction} label={score.label} name={score.name} />
        </span>
      </div>
      <h3 className="result-title">
        <button
          type="button"
          className="result-open"
          aria-pressed={selected}
          onClick={() => onOpen(hit.id)}
        >
          <Highlighted text={hitTitle(hit)} terms={terms} />
        </button>
      </h3>
      {body && (
        <p className="result-snippet">
          <Highlighted text={body} terms={terms} />
        </p>
      )}
    </li>
  );
}
