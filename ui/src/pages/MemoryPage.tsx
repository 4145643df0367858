import { Link } from "../components/Link";
import { MemoryDetail } from "../components/MemoryDetail";
import { navigate, routePath } from "../lib/router";

export type MemoryPageProps = { id: number };

/** /ui/memories/:id — one memory on its own page, for links and bookmarks. */
export function MemoryPage({ id }: MemoryPageProps) {
  return (
    <section className="page memory-page">
      <p className="breadcrumb">
        <Link href={routePath({ name: "timeline" })}>Timeline</Link> / memory #{id}
      </p>
      <MemoryDetail
        id={id}
        onNavigate={(next) => navigate(routePath({ name: "memory", id: next }))}
      />
    </section>
  );
}
