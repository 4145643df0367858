-- What `claude-memory promote` wrote into a repository's instruction files, and what a person
-- declined there (#58).
--
-- One row per instruction file (its absolute path) and memory: `state` 'written' with the
-- line's text as we last wrote it (so the next proposal can tell a person's edit from our
-- own line), or 'declined' (a line we wrote that the person deleted, or a proposal they
-- rejected in the web UI): a declined memory is never proposed for that file again.
-- Rows are their owner's (stamped by the default, as receipts are); ownerless rows (single-user
-- mode, the CLI) share the key 0.

CREATE TABLE promoted_lines (
    file_path  text NOT NULL,
    memory_id  bigint NOT NULL,
    owner_id   integer REFERENCES users (id) DEFAULT current_viewer(),
    state      text NOT NULL CHECK (state IN ('written', 'declined')),
    text       text NOT NULL DEFAULT '',
    at         timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX promoted_lines_key
    ON promoted_lines (file_path, memory_id, coalesce(owner_id, 0));
