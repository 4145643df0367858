import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../api";
import { lesson } from "../test/fixtures";
import { byText, click, render, type } from "../test/render";
import type { Lesson, NewLesson } from "../types";
import { LessonsSection, type LessonsSectionProps } from "./LessonsSection";

const warn = lesson({ id: 7 });
const ask = lesson({
  id: 8,
  tool: "",
  pattern: "rm -rf <dist>",
  project: "",
  message: "Ask before deleting <b>build</b> output.",
  strictness: "ask",
  origin: "agent",
  active: false,
});

function renderLessons(
  lessons: Lesson[] | undefined,
  handlers: Pick<LessonsSectionProps, "onToggle" | "onDismiss" | "onAdd"> = {
    onToggle: vi.fn(),
    onDismiss: vi.fn(),
    onAdd: vi.fn(async () => {}),
  },
) {
  return render(
    <LessonsSection
      lessons={lessons}
      error={null}
      onRetry={() => {}}
      busy={false}
      projects={[{ project: "acme-api", count: 3 }]}
      project=""
      {...handlers}
    />,
  );
}

describe("LessonsSection", () => {
  it("shows each lesson's message, tool, pattern, project, strictness and origin as text", async () => {
    const { container } = await renderLessons([warn, ask]);
    const [first, second] = [...container.querySelectorAll("li.lesson")];
    expect(first!.querySelector(".lesson-tool")?.textContent).toBe("Bash");
    expect(first!.querySelector("code.lesson-pattern")?.textContent).toBe("staging");
    expect(first!.querySelector(".lesson-strictness")?.textContent).toBe("warn");
    expect(first!.textContent).toContain("acme-api");
    expect(second!.querySelector(".lesson-tool")?.textContent).toBe("any tool");
    expect(second!.querySelector(".lesson-project")?.textContent).toBe("all projects");
    expect(second!.querySelector(".lesson-strictness")?.textContent).toBe("asks first");
    expect(second!.textContent).toContain("from agent");
    expect(second!.querySelector(".lesson-message")?.textContent).toContain("<b>build</b>");
    expect(container.querySelector("b, dist")).toBeNull();
  });

  it("mutes a disabled lesson and offers Enable; Disable calls back with the lesson", async () => {
    const handlers = { onToggle: vi.fn(), onDismiss: vi.fn(), onAdd: vi.fn(async () => {}) };
    const { container } = await renderLessons([warn, ask], handlers);
    const [first, second] = [...container.querySelectorAll("li.lesson")];
    expect(first!.classList.contains("is-inactive")).toBe(false);
    expect(second!.classList.contains("is-inactive")).toBe(true);
    expect(second!.querySelector(".lesson-disabled")?.textContent).toBe("disabled");
    expect(byText(second!, "button", "Enable")).not.toBeNull();
    await click(byText(first!, "button", "Disable"));
    expect(handlers.onToggle).toHaveBeenCalledWith(warn);
  });

  it("shows a proposal as proposed, with its session, and offers Accept and Dismiss", async () => {
    const proposal = lesson({
      id: 9,
      pattern: "\\bnpm\\b",
      origin: "journal:3f6c2a1e-8b4d-4c9e-a1f7-2d5e9b0c7a41",
      active: false,
      proposed: true,
    });
    const handlers = { onToggle: vi.fn(), onDismiss: vi.fn(), onAdd: vi.fn(async () => {}) };
    const { container } = await renderLessons([proposal, ask], handlers);
    const [card, disabled] = [...container.querySelectorAll("li.lesson")];
    expect(card!.querySelector(".lesson-proposed")?.textContent).toBe("proposed");
    expect(card!.querySelector(".lesson-disabled")).toBeNull();
    expect(card!.querySelector(".lesson-origin")?.textContent).toBe(
      "from a failed call corrected in session 3f6c2a1e",
    );
    expect(byText(card!, "button", "Enable")).toBeNull();
    expect(disabled!.querySelector(".lesson-proposed")).toBeNull();
    expect(byText(disabled!, "button", "Dismiss")).toBeNull();
    await click(byText(card!, "button", "Accept"));
    expect(handlers.onToggle).toHaveBeenCalledWith(proposal);
    await click(byText(card!, "button", "Dismiss"));
    expect(handlers.onDismiss).toHaveBeenCalledWith(proposal);
  });

  it("explains lessons when there are none", async () => {
    const { container } = await renderLessons([]);
    expect(container.textContent).toContain("No lessons yet.");
    expect(container.textContent).toContain("claude-memory lessons add");
  });

  it("adds a lesson from the form and shows the server's refusal", async () => {
    const onAdd = vi
      .fn<(draft: NewLesson) => Promise<void>>()
      .mockRejectedValueOnce(new ApiError(400, "invalid_input", "pattern is not valid"))
      .mockResolvedValueOnce(undefined);
    const { container } = await renderLessons([], { onToggle: vi.fn(), onDismiss: vi.fn(), onAdd });
    const [message, pattern, tool] = container.querySelectorAll("form input");
    await type(message!, "Use the local stack.");
    await type(pattern!, "staging(");
    await type(tool!, " Bash ");
    await click(byText(container, "button", "Add lesson"));
    expect(onAdd).toHaveBeenCalledWith({
      message: "Use the local stack.",
      pattern: "staging(",
      tool: "Bash",
      project: "",
      strictness: "warn",
      origin: "user",
    });
    expect(container.querySelector('[role="alert"]')?.textContent).toContain(
      "pattern is not valid",
    );
    expect((pattern as HTMLInputElement).value).toBe("staging(");
    await click(byText(container, "button", "Add lesson"));
    expect((pattern as HTMLInputElement).value).toBe("");
    expect(container.querySelector('[role="alert"]')).toBeNull();
  });
});
