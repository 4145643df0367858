import { type FormEvent, useState } from "react";
import { formatTags, parseTags } from "../lib/tags";
import type { Memory } from "../types";

export type MemoryEdit = { content: string; tags: string[] };

export type MemoryEditorProps = {
  memory: Memory;
  busy: boolean;
  onSave: (edit: MemoryEdit) => void;
  onCancel: () => void;
};

/** Edit a memory's content and tags; the server re-embeds and re-checks it on save. */
export function MemoryEditor({ memory, busy, onSave, onCancel }: MemoryEditorProps) {
  const [content, setContent] = useState(memory.content);
  const [tags, setTags] = useState(formatTags(memory.tags));

  function submit(event: FormEvent) {
    event.preventDefault();
    onSave({ content, tags: parseTags(tags) });
  }

  return (
    <form className="editor" onSubmit={submit} aria-label={`Edit memory ${memory.id}`}>
      <label className="field">
        <span>Content</span>
        <textarea
          value={content}
          rows={Math.min(18, Math.max(5, content.split("\n").length + 1))}
          onChange={(event) => setContent(event.target.value)}
          required
          autoFocus
        />
      </label>
      <label className="field">
        <span>Tags (comma separated)</span>
        <input type="text" value={tags} onChange={(event) => setTags(event.target.value)} />
      </label>
      <div className="row-actions">
        <button type="submit" className="button button-primary" disabled={busy || !content.trim()}>
          {busy ? "Saving…" : "Save"}
        </button>
        <button type="button" className="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}
