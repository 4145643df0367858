import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../api";
import { interact, render } from "../test/render";
import { bumpData } from "./dataVersion";
import { type ApiState, useApi } from "./useApi";

function Probe({
  id,
  load,
}: {
  id: string | null;
  load: (signal: AbortSignal) => Promise<string>;
}) {
  const state: ApiState<string> = useApi(id, load);
  return (
    <p>
      {state.loading ? "loading" : state.error ? `error: ${state.error}` : (state.data ?? "none")}
    </p>
  );
}

const settle = () => interact(() => new Promise((resolve) => setTimeout(resolve, 0)));

describe("useApi", () => {
  it("goes from loading to data, and loads again after a write", async () => {
    const load = vi.fn(async () => `value ${load.mock.calls.length}`);
    const { container } = await render(<Probe id="a" load={load} />);
    await settle();
    expect(container.textContent).toBe("value 1");
    await interact(() => bumpData());
    await settle();
    expect(container.textContent).toBe("value 2");
  });

  it("shows the server's message on failure", async () => {
    const { container } = await render(
      <Probe
        id="a"
        load={async () =>
          Promise.reject(new ApiError(503, "unavailable", "the database does not answer"))
        }
      />,
    );
    await settle();
    expect(container.textContent).toBe("error: the database does not answer");
  });

  it("aborts the previous request when the key changes, and loads nothing for null", async () => {
    const signals: AbortSignal[] = [];
    const load = (signal: AbortSignal) => {
      signals.push(signal);
      return new Promise<string>(() => {});
    };
    const view = await render(<Probe id="a" load={load} />);
    await view.rerender(<Probe id="b" load={load} />);
    expect(signals[0]!.aborted).toBe(true);
    expect(signals[1]!.aborted).toBe(false);
    await view.rerender(<Probe id={null} load={load} />);
    expect(signals).toHaveLength(2);
    expect(view.container.textContent).toBe("none");
  });
});
