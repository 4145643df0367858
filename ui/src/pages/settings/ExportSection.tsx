import { type MouseEvent, useState } from "react";
import { downloadExport, errorMessage, type ExportFormat, exportUrl, storedToken } from "../../api";
import { ErrorNotice } from "../../components/ErrorNotice";

const FORMATS: { format: ExportFormat; label: string; file: string }[] = [
  { format: "json", label: "Export as JSON", file: "claude-memory.json" },
  { format: "markdown", label: "Export as Markdown", file: "claude-memory.md" },
];

/** Downloads of every memory. Plain links; with a token set, fetched so the token is sent. */
export function ExportSection() {
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState<ExportFormat | null>(null);

  async function download(
    event: MouseEvent<HTMLAnchorElement>,
    format: ExportFormat,
    file: string,
  ) {
    if (!storedToken()) return;
    event.preventDefault();
    setBusy(format);
    setFailure(null);
    try {
      const blob = await downloadExport(format);
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = file;
      link.click();
      window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(null);
    }
  }

  return (
    <section className="panel" aria-labelledby="export-title">
      <h2 id="export-title">Export</h2>
      <p>Every memory with its metadata (deleted ones excluded), streamed as one file.</p>
      <div className="row-actions">
        {FORMATS.map(({ format, label, file }) => (
          <a
            key={format}
            className="button"
            href={exportUrl(format)}
            download={file}
            aria-busy={busy === format}
            onClick={(event) => download(event, format, file)}
          >
            {busy === format ? "Preparing…" : label}
          </a>
        ))}
      </div>
      {failure && <ErrorNotice message={failure} />}
    </section>
  );
}
