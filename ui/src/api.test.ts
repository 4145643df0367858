import { afterEach, describe, expect, it, vi } from "vitest";
import {
  ApiError,
  getContext,
  getHealth,
  getMemory,
  searchMemories,
  setTokenPrompt,
  storedToken,
  TOKEN_STORAGE_KEY,
} from "./api";
import { jsonResponse } from "./test/render";

type Call = { url: string; init: RequestInit };

function fakeFetch(answer: (call: Call, index: number) => Response | Promise<Response>) {
  const calls: Call[] = [];
  const fetchMock = vi.fn(async (url: RequestInfo | URL, init: RequestInit = {}) => {
    const call = { url: String(url), init };
    calls.push(call);
    return answer(call, calls.length - 1);
  });
  vi.stubGlobal("fetch", fetchMock);
  return calls;
}

const authorization = (call: Call) => new Headers(call.init.headers).get("Authorization");
const unauthorized = () =>
  jsonResponse(
    {
      error: { code: "unauthorized", message: "this server needs its token (CLAUDE_MEMORY_TOKEN)" },
    },
    401,
  );

afterEach(() => {
  vi.unstubAllGlobals();
  setTokenPrompt(null);
});

describe("errors", () => {
  it("throws ApiError with the server's code and message", async () => {
    fakeFetch(() =>
      jsonResponse({ error: { code: "not_found", message: "memory 42 does not exist" } }, 404),
    );
    const error = await getMemory(42).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 404,
      code: "not_found",
      message: "memory 42 does not exist",
    });
  });

  it("keeps a readable message when the body is not our JSON", async () => {
    fakeFetch(() => new Response("Bad Gateway", { status: 502, statusText: "Bad Gateway" }));
    await expect(getMemory(1)).rejects.toMatchObject({
      status: 502,
      code: "http_error",
      message: "Bad Gateway",
    });
  });

  it("sends JSON bodies with a content type", async () => {
    const calls = fakeFetch(() => jsonResponse({ mode: "keyword", hits: [], took_ms: 1 }));
    await searchMemories({ query: "pnpm", mode: "keyword" });
    expect(calls[0]!.url).toBe("/api/search");
    expect(calls[0]!.init.method).toBe("POST");
    expect(new Headers(calls[0]!.init.headers).get("Content-Type")).toBe("application/json");
    expect(JSON.parse(String(calls[0]!.init.body))).toEqual({ query: "pnpm", mode: "keyword" });
  });
});

describe("getContext", () => {
  it("sends the period and leaves out an empty project", async () => {
    const calls = fakeFetch(() => jsonResponse({}));
    await getContext({ project: "", days: 7 });
    await getContext({ project: "acme-api", days: 90, top: 5 });
    expect(calls.map((call) => call.url)).toEqual([
      "/api/context?days=7",
      "/api/context?project=acme-api&days=90&top=5",
    ]);
  });
});

describe("bearer token", () => {
  it("asks once on 401, keeps the token in sessionStorage and retries with it", async () => {
    const calls = fakeFetch((call) =>
      authorization(call) === "Bearer s3cret-token-0123456789"
        ? jsonResponse({ id: 1 })
        : unauthorized(),
    );
    const prompt = vi.fn(async () => "s3cret-token-0123456789");
    setTokenPrompt(prompt);

    const [a, b] = await Promise.all([getMemory(1), getMemory(2)]);
    expect(a).toEqual({ id: 1 });
    expect(b).toEqual({ id: 1 });
    expect(prompt).toHaveBeenCalledOnce();
    expect(prompt).toHaveBeenCalledWith("required");
    expect(sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBe("s3cret-token-0123456789");

    await getMemory(3);
    expect(prompt).toHaveBeenCalledOnce();
    expect(authorization(calls[calls.length - 1]!)).toBe("Bearer s3cret-token-0123456789");
  });

  it("sends the stored token on /health too", async () => {
    sessionStorage.setItem(TOKEN_STORAGE_KEY, "tok-abcdefghijklmnop");
    const calls = fakeFetch(() =>
      jsonResponse({
        status: "ok",
        database: "ok",
        database_kind: "embedded",
        embedding_provider: "local",
        embedding_model: "m",
        embedding_dimension: 384,
        embeddings: "ok",
        vectors_waiting: 0,
        version: "0.1.0",
      }),
    );
    const reading = await getHealth();
    expect(calls[0]!.url).toBe("/health");
    expect(authorization(calls[0]!)).toBe("Bearer tok-abcdefghijklmnop");
    expect(reading.health.database).toBe("ok");
    expect(reading.rttMs).toBeGreaterThanOrEqual(0);
  });

  it("reads a 503 health answer as a degraded reading", async () => {
    fakeFetch(() =>
      jsonResponse(
        {
          status: "degraded",
          database: "unavailable",
          database_kind: "external",
          embedding_provider: "local",
          embedding_model: "m",
          embedding_dimension: 384,
          embeddings: "ok",
          vectors_waiting: null,
          version: "0.1.0",
        },
        503,
      ),
    );
    expect((await getHealth()).health.database).toBe("unavailable");
  });

  it("drops a refused token and asks again, saying it was refused", async () => {
    sessionStorage.setItem(TOKEN_STORAGE_KEY, "old-token-0123456789");
    fakeFetch((call) =>
      authorization(call) === "Bearer new-token-0123456789"
        ? jsonResponse({ id: 5 })
        : unauthorized(),
    );
    const prompt = vi.fn(async () => "new-token-0123456789");
    setTokenPrompt(prompt);
    await expect(getMemory(5)).resolves.toEqual({ id: 5 });
    expect(prompt).toHaveBeenCalledWith("refused");
    expect(storedToken()).toBe("new-token-0123456789");
  });

  it("fails with the server's 401 message when the user cancels", async () => {
    fakeFetch(() => unauthorized());
    setTokenPrompt(async () => null);
    await expect(getMemory(1)).rejects.toMatchObject({
      status: 401,
      code: "unauthorized",
      message: "this server needs its token (CLAUDE_MEMORY_TOKEN)",
    });
    expect(storedToken()).toBeNull();
  });
});
