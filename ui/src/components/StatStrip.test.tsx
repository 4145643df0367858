import { describe, expect, it } from "vitest";
import { stats } from "../test/fixtures";
import { render } from "../test/render";
import { StatStrip } from "./StatStrip";

describe("StatStrip", () => {
  it("shows the server's figures", async () => {
    const { container } = await render(
      <StatStrip
        stats={stats()}
        sessions={{ total: 4, limit: 1, offset: 0, sessions: [], by_source: { "claude-code": 4 } }}
        error={null}
      />,
    );
    const figures = Object.fromEntries(
      [...container.querySelectorAll(".stat")].map((stat) => [
        stat.querySelector("dt")!.textContent,
        stat.querySelector("dd")!.textContent,
      ]),
    );
    expect(figures).toEqual({
      memories: "54",
      deleted: "6",
      projects: "2",
      sessions: "4",
      "pending distillation": "2",
      storage: "600 KB",
    });
  });

  it("says why figures are missing instead of inventing them", async () => {
    const { container } = await render(
      <StatStrip stats={undefined} sessions={undefined} error="database unavailable" />,
    );
    expect(container.textContent).toBe("Statistics unavailable: database unavailable");
  });
});
