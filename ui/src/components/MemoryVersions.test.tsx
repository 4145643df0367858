import { afterEach, describe, expect, it, vi } from "vitest";
import { memory } from "../test/fixtures";
import { byText, click, interact, jsonResponse, render, type } from "../test/render";
import type { MemoryVersion } from "../types";
import { MemoryVersions } from "./MemoryVersions";

afterEach(() => vi.unstubAllGlobals());

function version(overrides: Partial<MemoryVersion>): MemoryVersion {
  return {
    id: 1,
    created_at: "2026-05-01T09:00:00+00:00",
    kind: "note",
    preview: "The minimum Node version is 18.",
    reason: "",
    deleted: false,
    current: false,
    ...overrides,
  };
}

const CHAIN = [
  version({ id: 11 }),
  version({ id: 12, preview: "Bumped Node to 20.", reason: "number 18 -> 20" }),
  version({ id: 13, preview: "Node 22 now.", reason: "number 20 -> 22", current: true }),
];

async function settle() {
  await interact(() => new Promise((resolve) => setTimeout(resolve, 0)));
}

describe("MemoryVersions", () => {
  it("lists the chain oldest first with dates, reasons and the current one marked", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => jsonResponse(CHAIN)),
    );
    const opened: number[] = [];
    const { container } = await render(
      <MemoryVersions
        memory={memory({ id: 12, supersedes: 11, superseded_by: 13 })}
        busy={false}
        onNavigate={(id) => opened.push(id)}
        onLink={() => {}}
      />,
    );
    await settle();

    const items = [...container.querySelectorAll(".version")];
    expect(items.map((item) => item.querySelector(".mono")?.textContent)).toEqual([
      "#11",
      "#12",
      "#13",
    ]);
    expect(items[1]!.classList.contains("is-this")).toBe(true);
    expect(items[2]!.classList.contains("is-current")).toBe(true);
    expect(items[2]!.textContent).toContain("number 20 -> 22");
    expect(items[0]!.querySelector("time")?.getAttribute("dateTime")).toBe(CHAIN[0]!.created_at);
    await click(byText(container, "button", "#13"));
    expect(opened).toEqual([13]);
  });

  it("sets a link by id and removes the one there is", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => jsonResponse([version({ id: 12, current: true })])),
    );
    const links: number[] = [];
    const { container } = await render(
      <MemoryVersions
        memory={memory({ id: 12, supersedes: 7 })}
        busy={false}
        onNavigate={() => {}}
        onLink={(id) => links.push(id)}
      />,
    );
    await settle();

    expect(container.textContent).toContain("No other version of this fact.");
    await type(container.querySelector("input")!, "9");
    await click(byText(container, "button", "Link"));
    await click(byText(container, "button", "Unlink #7"));
    expect(links).toEqual([9, 0]);
  });
});
