import { type FormEvent, useEffect, useRef, useState } from "react";
import { setTokenPrompt, type TokenReason } from "../api";
import { useFocusTrap } from "../lib/focusTrap";

type Pending = { reason: TokenReason; resolve: (token: string | null) => void };

/** Registers itself as the API client's token prompt and asks when the server says 401. */
export function TokenDialog() {
  const [pending, setPending] = useState<Pending | null>(null);

  useEffect(() => {
    setTokenPrompt(
      (reason) => new Promise<string | null>((resolve) => setPending({ reason, resolve })),
    );
    return () => setTokenPrompt(null);
  }, []);

  if (!pending) return null;
  const finish = (token: string | null) => {
    pending.resolve(token);
    setPending(null);
  };
  return <TokenForm reason={pending.reason} onDone={finish} />;
}

type TokenFormProps = { reason: TokenReason; onDone: (token: string | null) => void };

function TokenForm({ reason, onDone }: TokenFormProps) {
  const [token, setToken] = useState("");
  const dialog = useRef<HTMLDivElement>(null);
  useFocusTrap(dialog, () => onDone(null));

  function submit(event: FormEvent) {
    event.preventDefault();
    const value = token.trim();
    if (value) onDone(value);
  }

  return (
    <div className="overlay">
      <div
        ref={dialog}
        className="dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="token-title"
        aria-describedby="token-help"
      >
        <form onSubmit={submit}>
          <h2 id="token-title">Access token needed</h2>
          <p id="token-help">
            {reason === "refused"
              ? "The server refused that token. Check CLAUDE_MEMORY_TOKEN on the server and try again."
              : "This server asks for its access token (CLAUDE_MEMORY_TOKEN)."}{" "}
            It is kept for this browser tab only.
          </p>
          <label className="field">
            <span>Token</span>
            <input
              type="password"
              autoComplete="off"
              spellCheck={false}
              value={token}
              data-autofocus
              onChange={(event) => setToken(event.target.value)}
            />
          </label>
          <div className="dialog-actions">
            <button type="button" className="button" onClick={() => onDone(null)}>
              Cancel
            </button>
            <button type="submit" className="button button-primary" disabled={!token.trim()}>
              Connect
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}
