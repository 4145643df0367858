import { describe, expect, it } from "vitest";
import { Link } from "../components/Link";
import { click, interact, render } from "../test/render";
import {
  idParam,
  navigate,
  parseRoute,
  routePath,
  setParams,
  useLocation,
  withParams,
} from "./router";

describe("parseRoute", () => {
  it.each([
    ["/ui", { name: "timeline" }],
    ["/ui/", { name: "timeline" }],
    ["/ui/timeline", { name: "timeline" }],
    ["/ui/search", { name: "search" }],
    ["/ui/search/", { name: "search" }],
    ["/ui/memories/42", { name: "memory", id: 42 }],
    ["/ui/preferences", { name: "preferences" }],
    ["/ui/lessons", { name: "lessons" }],
    ["/ui/sessions", { name: "sessions" }],
    ["/ui/context", { name: "context" }],
    ["/ui/settings", { name: "settings" }],
  ])("%s", (path, route) => {
    expect(parseRoute(path)).toEqual(route);
  });

  it.each(["/ui/memories/0", "/ui/memories/abc", "/ui/memories/1/extra", "/ui/nope"])(
    "%s is not found",
    (path) => {
      expect(parseRoute(path)).toEqual({ name: "not-found", path });
    },
  );

  it("is the inverse of routePath", () => {
    for (const route of [
      { name: "timeline" },
      { name: "search" },
      { name: "memory", id: 7 },
      { name: "preferences" },
      { name: "lessons" },
      { name: "sessions" },
      { name: "context" },
      { name: "settings" },
    ] as const) {
      expect(parseRoute(routePath(route))).toEqual(route);
    }
  });
});

describe("navigation", () => {
  function Where() {
    const { route, params } = useLocation();
    return (
      <p>
        {route.name}|{params.get("q") ?? ""}
      </p>
    );
  }

  it("pushes history and re-renders subscribers, and back works", async () => {
    const { container } = await render(<Where />);
    expect(container.textContent).toBe("timeline|");
    await interact(() => navigate("/ui/search?q=pnpm"));
    expect(window.location.pathname).toBe("/ui/search");
    expect(container.textContent).toBe("search|pnpm");
    await interact(() => setParams({ q: "npm" }));
    expect(container.textContent).toBe("search|npm");
    await interact(() => {
      window.history.replaceState(null, "", "/ui/settings");
      window.dispatchEvent(new PopStateEvent("popstate"));
    });
    expect(container.textContent).toBe("settings|");
  });

  it("changes and removes search params", () => {
    window.history.replaceState(null, "", "/ui/search?q=a&mode=keyword");
    expect(withParams({ q: "b", mode: null, memory: "3" })).toBe("/ui/search?q=b&memory=3");
  });

  it("reads memory ids from params", () => {
    expect(idParam(new URLSearchParams("memory=42"))).toBe(42);
    expect(idParam(new URLSearchParams("memory=-1"))).toBeNull();
    expect(idParam(new URLSearchParams(""))).toBeNull();
  });

  it("Link navigates in place on a plain click and leaves modified clicks to the browser", async () => {
    const { container } = await render(<Link href="/ui/preferences">prefs</Link>);
    const link = container.querySelector("a")!;
    await click(link);
    expect(window.location.pathname).toBe("/ui/preferences");

    window.history.replaceState(null, "", "/ui/");
    const event = new MouseEvent("click", { bubbles: true, cancelable: true, ctrlKey: true });
    await interact(() => {
      link.dispatchEvent(event);
    });
    expect(window.location.pathname).toBe("/ui/");
  });
});
