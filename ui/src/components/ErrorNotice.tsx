export type ErrorNoticeProps = { message: string; onRetry?: () => void };

/** The server's (or the network's) message, said plainly, with a retry when it may help. */
export function ErrorNotice({ message, onRetry }: ErrorNoticeProps) {
  return (
    <div className="notice notice-error" role="alert">
      <span>{message}</span>
      {onRetry && (
        <button type="button" className="button button-small" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
