-- The folder a project was found at when no memory or imported session knew one (#68): a
-- project named before its folder (MCP save_memory's `project` is a display name) is the
-- project of a session's folder whose name or git remote names it, recorded at that
-- session's start so it is said once, and corrected by the user (`claude-memory folder`).
--
-- One row per folder (as the session gave it, no trailing '/') and owner: `project` '' when
-- the user said the folder is no known project's; `matched_by` says how it was found:
-- 'name', 'remote', or 'user' (the user's own word). Rows are their owner's (stamped by the
-- default, as receipts are); ownerless rows (single-user mode, the CLI) share the key 0.

CREATE TABLE project_folders (
    folder     text NOT NULL CHECK (folder <> ''),
    project    text NOT NULL,
    owner_id   integer REFERENCES users (id) DEFAULT current_viewer(),
    matched_by text NOT NULL CHECK (matched_by IN ('name', 'remote', 'user')),
    at         timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX project_folders_key
    ON project_folders (lower(folder), coalesce(owner_id, 0));
