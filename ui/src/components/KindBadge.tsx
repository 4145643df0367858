import { kindClass } from "../lib/timeline";

export type KindBadgeProps = { kind: string };

export function KindBadge({ kind }: KindBadgeProps) {
  return <span className={`badge kind-badge ${kindClass(kind)}`}>{kind}</span>;
}
