import { afterEach, describe, expect, it, vi } from "vitest";
import { byText, click, interact, jsonResponse, render } from "../test/render";
import { useLocation } from "../lib/router";
import type { PromoteFile, PromoteProposal, PromoteResult } from "../types";
import { InstructionsPage } from "./InstructionsPage";

afterEach(() => vi.unstubAllGlobals());

function Routed() {
  const { params } = useLocation();
  return <InstructionsPage params={params} />;
}

const HOSTILE = "Ship with <b>html</b> <img src=x onerror=alert(1)>";

function file(overrides: Partial<PromoteFile> = {}): PromoteFile {
  return {
    path: "/home/dev/acme-api/CLAUDE.md",
    name: "CLAUDE.md",
    exists: true,
    creates: false,
    diff: "--- a/CLAUDE.md\n+++ b/CLAUDE.md\n@@ -1,2 +1,4 @@\n # acme-api\n+- Use pnpm, not npm. <!-- memory:12 -->\n-- Deploy on Fridays. <!-- memory:7 -->\n",
    changes: [
      {
        action: "add",
        memory_id: 12,
        text: "Use pnpm, not npm.",
        old_text: null,
        reason: "used in 5 injections, none corrected",
      },
      {
        action: "remove",
        memory_id: 7,
        text: null,
        old_text: "Deploy on Fridays.",
        reason: "superseded on 12 May 2026 by #40: never deploy on Fridays",
      },
      {
        action: "add",
        memory_id: 30,
        text: HOSTILE,
        old_text: null,
        reason: "a rule you stated",
        source: "an import",
      },
      {
        action: "keep",
        memory_id: 3,
        text: "Run the tests with make test.",
        old_text: null,
        reason: "still holds",
      },
    ],
    ...overrides,
  };
}

function proposal(overrides: Partial<PromoteProposal> = {}): PromoteProposal {
  return {
    project: "acme-api",
    root: "/home/dev/acme-api",
    files: [file()],
    left_out: 2,
    ...overrides,
  };
}

type Call = { url: string; method: string; body: unknown };

/** The server: /api/projects, GET /api/promote answering `answers` in turn, POST `written`. */
function serve(written: PromoteResult, ...answers: PromoteProposal[]) {
  const calls: Call[] = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const method = init.method ?? "GET";
      const body = typeof init.body === "string" ? (JSON.parse(init.body) as unknown) : null;
      calls.push({ url, method, body });
      if (url === "/api/projects") return jsonResponse([{ project: "acme-api", count: 9 }]);
      if (method === "POST") return jsonResponse(written);
      const reads = calls.filter((c) => c.url.startsWith("/api/promote") && c.method === "GET");
      return jsonResponse(answers[Math.min(reads.length, answers.length) - 1]);
    }),
  );
  return calls;
}

async function settle() {
  await interact(() => new Promise((resolve) => setTimeout(resolve, 0)));
}

describe("InstructionsPage", () => {
  it("asks for a project before reading any proposal", async () => {
    const calls = serve({ written: [], files: [] });
    window.history.replaceState(null, "", "/ui/instructions");
    const { container } = await render(<Routed />);
    await settle();

    expect(calls.some((c) => c.url.startsWith("/api/promote"))).toBe(false);
    expect(container.textContent).toContain("Choose a project");
  });

  it("shows each proposed line with its reason, memory link and accept chosen", async () => {
    const calls = serve({ written: [], files: [] }, proposal());
    window.history.replaceState(null, "", "/ui/instructions?project=acme-api");
    const { container } = await render(<Routed />);
    await settle();

    expect(calls.map((c) => c.url)).toContain("/api/promote?project=acme-api");
    const list = container.querySelector('[aria-label="Proposed changes to CLAUDE.md"]');
    const rows = [...(list?.querySelectorAll("li") ?? [])];
    expect(rows.map((row) => row.querySelector(".promote-action")?.textContent)).toEqual([
      "add",
      "remove",
      "add",
    ]);
    expect(rows[0]?.textContent).toContain("used in 5 injections, none corrected");
    expect(rows[0]?.querySelector("a")?.getAttribute("href")).toBe("/ui/memories/12");
    expect(rows[1]?.querySelector("del")?.textContent).toBe("Deploy on Fridays.");
    expect(rows[2]?.textContent).toContain("a rule you stated · from an import");
    const accepted = [...container.querySelectorAll<HTMLInputElement>('input[value="accept"]')];
    expect(accepted.map((input) => input.checked)).toEqual([true, true, true]);
    expect(container.textContent).toContain("3 proposed changes");
    expect(container.textContent).toContain("2 more did not fit");
    expect(container.querySelector(".promote-kept")?.textContent).toContain("1 line stays");
    expect(container.querySelector(".diff-add")?.textContent).toContain("Use pnpm, not npm.");
    expect(container.querySelector(".diff-remove")?.textContent).toContain("Deploy on Fridays.");
  });

  it("renders memory text as text, never as HTML", async () => {
    serve({ written: [], files: [] }, proposal());
    window.history.replaceState(null, "", "/ui/instructions?project=acme-api");
    const { container } = await render(<Routed />);
    await settle();

    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector(".promote-changes b")).toBeNull();
    expect(byText(container, ".promote-text", "<img src=x onerror=alert(1)>")).not.toBeNull();
  });

  it("writes the accepted and rejected ids and shows each file written with its backup", async () => {
    const after = proposal({
      files: [file({ diff: "", changes: [file().changes[3]!] })],
      left_out: 0,
    });
    const calls = serve(
      {
        written: [
          {
            path: "/home/dev/acme-api/CLAUDE.md",
            backup: "/home/dev/acme-api/CLAUDE.md.claude-memory-backup-20261128T165000",
          },
        ],
        files: after.files,
      },
      proposal(),
      after,
    );
    window.history.replaceState(null, "", "/ui/instructions?project=acme-api");
    const { container } = await render(<Routed />);
    await settle();

    const rejectRemoval = container.querySelectorAll<HTMLInputElement>('input[value="reject"]')[1];
    await click(rejectRemoval ?? null);
    expect(container.textContent).toContain("2 accepted, 1 rejected");
    expect(container.querySelector(".diff-rejected")?.textContent).toContain("Deploy on Fridays.");
    expect(container.querySelector(".diff-add")?.classList.contains("diff-rejected")).toBe(false);
    await click(byText(container, "button", "Write"));
    await settle();

    const post = calls.find((c) => c.method === "POST");
    expect(post?.url).toBe("/api/promote");
    expect(post?.body).toEqual({ project: "acme-api", cwd: null, accept: [12, 30], reject: [7] });
    const written = container.querySelector('[aria-label="Files written"]')?.textContent ?? "";
    expect(written).toContain("/home/dev/acme-api/CLAUDE.md");
    expect(written).toContain("backup: /home/dev/acme-api/CLAUDE.md.claude-memory-backup-");
    expect(
      calls.filter((c) => c.url.startsWith("/api/promote") && c.method === "GET"),
    ).toHaveLength(2);
    expect(container.textContent).toContain("nothing new to propose");
  });

  it("says when a file would be created", async () => {
    serve(
      { written: [], files: [] },
      proposal({
        files: [
          file({
            path: "/home/dev/acme-api/AGENTS.md",
            name: "AGENTS.md",
            exists: false,
            creates: true,
          }),
        ],
      }),
    );
    window.history.replaceState(null, "", "/ui/instructions?project=acme-api");
    const { container } = await render(<Routed />);
    await settle();

    expect(container.querySelector(".promote-file-name")?.textContent).toBe(
      "AGENTS.mdwill be created",
    );
  });
});
