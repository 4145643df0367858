export type LoadingNoticeProps = { label?: string };

export function LoadingNotice({ label = "Loading…" }: LoadingNoticeProps) {
  return (
    <p className="notice notice-loading" role="status">
      {label}
    </p>
  );
}
