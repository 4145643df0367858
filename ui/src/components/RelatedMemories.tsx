import { getRelated } from "../api";
import { formatDate } from "../lib/format";
import { useApi } from "../lib/useApi";
import { ErrorNotice } from "./ErrorNotice";
import { KindBadge } from "./KindBadge";

export type RelatedMemoriesProps = { id: number; onNavigate: (id: number) => void };

const RELATED_LIMIT = 5;

/** The nearest memories by meaning; a click opens one. */
export function RelatedMemories({ id, onNavigate }: RelatedMemoriesProps) {
  const related = useApi(`related:${id}`, (signal) => getRelated(id, RELATED_LIMIT, signal));
  return (
    <section className="related" aria-labelledby={`related-${id}`}>
      <h3 id={`related-${id}`}>Related</h3>
      {related.error && <ErrorNotice message={related.error} onRetry={related.reload} />}
      {related.loading && !related.data && <p className="muted">Finding related memories…</p>}
      {related.data && related.data.length === 0 && (
        <p className="muted">Nothing close to this one yet.</p>
      )}
      {related.data && related.data.length > 0 && (
        <ul className="related-list">
          {related.data.map((item) => (
            <li key={item.id}>
              <button type="button" className="related-item" onClick={() => onNavigate(item.id)}>
                <span className="related-head">
                  <KindBadge kind={item.kind} />
                  <span className="muted">
                    {item.project || "(no project)"} · {formatDate(item.created_at)}
                  </span>
                  <span className="related-score" title="cosine similarity">
                    {item.similarity.toFixed(2)}
                  </span>
                </span>
                <span className="related-preview">{item.preview}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
