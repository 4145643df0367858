import { useState } from "react";

export type CopyButtonProps = { text: string; label: string };

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // The clipboard API needs a secure context; 127.0.0.1 is one, a LAN address is not.
    const field = document.createElement("textarea");
    field.value = text;
    field.setAttribute("readonly", "");
    field.style.position = "fixed";
    field.style.opacity = "0";
    document.body.append(field);
    field.select();
    const copied = document.execCommand?.("copy") ?? false;
    field.remove();
    return copied;
  }
}

export function CopyButton({ text, label }: CopyButtonProps) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <button
      type="button"
      className="button button-small"
      onClick={async () => {
        setState((await copyText(text)) ? "copied" : "failed");
        window.setTimeout(() => setState("idle"), 1600);
      }}
    >
      <span aria-live="polite">
        {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : label}
      </span>
    </button>
  );
}
