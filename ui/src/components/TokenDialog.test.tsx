import { afterEach, describe, expect, it, vi } from "vitest";
import { getStats, TOKEN_STORAGE_KEY } from "../api";
import { stats } from "../test/fixtures";
import { byText, click, interact, jsonResponse, render, type } from "../test/render";
import { TokenDialog } from "./TokenDialog";

afterEach(() => vi.unstubAllGlobals());

describe("TokenDialog", () => {
  it("appears on a 401, and the request goes through with the token typed in", async () => {
    const seen: (string | null)[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (_url: string, init: RequestInit = {}) => {
        const auth = new Headers(init.headers).get("Authorization");
        seen.push(auth);
        return auth === "Bearer typed-token-0123456789"
          ? jsonResponse(stats())
          : jsonResponse({ error: { code: "unauthorized", message: "needs token" } }, 401);
      }),
    );
    const { container } = await render(<TokenDialog />);
    expect(container.querySelector('[role="dialog"]')).toBeNull();

    let result: Promise<unknown> = Promise.resolve();
    await interact(() => {
      result = getStats();
    });
    const dialog = container.querySelector('[role="dialog"]')!;
    expect(dialog.textContent).toContain("Access token needed");
    const input = dialog.querySelector("input")!;
    expect(input.type).toBe("password");
    expect(document.activeElement).toBe(input);

    await type(input, "typed-token-0123456789");
    await click(byText(dialog, "button", "Connect"));
    await expect(result).resolves.toMatchObject({ active: 54 });
    expect(container.querySelector('[role="dialog"]')).toBeNull();
    expect(sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBe("typed-token-0123456789");
    expect(seen).toEqual([null, "Bearer typed-token-0123456789"]);
  });

  it("gives up with the server's message when cancelled", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () =>
        jsonResponse({ error: { code: "unauthorized", message: "needs token" } }, 401),
      ),
    );
    const { container } = await render(<TokenDialog />);
    let result: Promise<unknown> = Promise.resolve();
    await interact(() => {
      result = getStats().catch((error: unknown) => error);
    });
    await click(byText(container, "button", "Cancel"));
    expect(await result).toMatchObject({ status: 401, message: "needs token" });
  });
});
