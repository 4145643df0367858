import { EmptyState } from "../components/EmptyState";
import { Link } from "../components/Link";
import { routePath } from "../lib/router";

export type NotFoundPageProps = { path: string };

export function NotFoundPage({ path }: NotFoundPageProps) {
  return (
    <section className="page">
      <h1>Not found</h1>
      <EmptyState title={`There is no page at ${path}.`}>
        <p>
          Go to the <Link href={routePath({ name: "timeline" })}>timeline</Link> or{" "}
          <Link href={routePath({ name: "search" })}>search</Link>.
        </p>
      </EmptyState>
    </section>
  );
}
