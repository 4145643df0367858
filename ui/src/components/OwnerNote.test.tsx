import { describe, expect, it } from "vitest";
import { hit, memory } from "../test/fixtures";
import { render } from "../test/render";
import { MemoryMeta } from "./MemoryMeta";
import { ReaderOverlay } from "./ReaderOverlay";
import { SearchResultItem } from "./SearchResultItem";

const ALICE_PRIVATE = { owner: "alice", visibility: "private" } as const;
const BOB_SHARED = { owner: "bob", visibility: "shared" } as const;
// A single-user server: no owner, and "shared" means nothing.
const NOBODY = { owner: null, visibility: "shared" } as const;

async function meta(ownership: object) {
  const { container } = await render(
    <MemoryMeta memory={memory(ownership)} onNavigate={() => {}} />,
  );
  return container;
}

async function result(ownership: object) {
  const { container } = await render(
    <ul>
      <SearchResultItem
        hit={hit(ownership)}
        mode="semantic"
        best={0.61}
        terms={[]}
        selected={false}
        onOpen={() => {}}
      />
    </ul>,
  );
  return container;
}

async function reader(ownership: object) {
  const { container } = await render(
    <ReaderOverlay memory={memory(ownership)} onClose={() => {}} />,
  );
  return container;
}

const privateBadge = (container: HTMLElement) => container.querySelector(".badge-private");

describe.each([
  ["MemoryMeta", meta],
  ["SearchResultItem", result],
  ["ReaderOverlay", reader],
])("%s owner", (_name, show) => {
  it("shows who saved a private memory and that it is private", async () => {
    const container = await show(ALICE_PRIVATE);
    expect(container.querySelector(".owner-note")?.textContent).toContain("by alice");
    expect(privateBadge(container)?.textContent).toBe("private");
    expect(privateBadge(container)?.getAttribute("title")).toBe("Only alice can see it");
  });

  it("shows the owner of a shared memory without the badge", async () => {
    const container = await show(BOB_SHARED);
    expect(container.textContent).toContain("by bob");
    expect(privateBadge(container)).toBeNull();
  });

  it("shows neither without an owner, as on a single-user server", async () => {
    for (const ownership of [NOBODY, { owner: null, visibility: "private" }, {}]) {
      const container = await show(ownership);
      expect(container.textContent).not.toContain("by ");
      expect(container.textContent).not.toContain("private");
      expect(container.querySelector(".owner-note")).toBeNull();
      expect(privateBadge(container)).toBeNull();
    }
  });

  it("renders the name as text, never as markup", async () => {
    const container = await show({ owner: "<img src=x onerror=alert(1)>", visibility: "private" });
    expect(container.querySelector("img")).toBeNull();
    expect(container.textContent).toContain("by <img src=x onerror=alert(1)>");
  });
});
