import { describe, expect, it } from "vitest";
import { render } from "../test/render";
import type { Health } from "../types";
import { HealthBadge } from "./HealthBadge";

function health(overrides: Partial<Health> = {}): Health {
  return {
    status: "ok",
    database: "ok",
    database_kind: "embedded",
    embedding_provider: "openai",
    embedding_model: "nomic-embed-text",
    embedding_dimension: 768,
    embeddings: "ok",
    vectors_waiting: 0,
    version: "0.1.0",
    ...overrides,
  };
}

describe("HealthBadge", () => {
  it("is quiet when everything answers", async () => {
    const { container } = await render(
      <HealthBadge state={{ reading: { health: health(), rttMs: 4 }, error: null }} />,
    );
    const badge = container.querySelector(".health")!;
    expect(badge.className).toContain("health-ok");
    expect(badge.textContent).not.toContain("waiting");
    expect(badge.getAttribute("title")).toContain("nomic-embed-text (768-d, openai, ok)");
  });

  it("says when the embeddings endpoint is down and how many memories wait", async () => {
    const reading = {
      health: health({ embeddings: "unavailable", vectors_waiting: 12 }),
      rttMs: 4,
    };
    const { container } = await render(<HealthBadge state={{ reading, error: null }} />);
    const badge = container.querySelector(".health")!;
    expect(badge.className).toContain("health-warn");
    expect(badge.textContent).toContain("embeddings down");
    expect(badge.textContent).toContain("12 waiting for vectors");
  });
});
