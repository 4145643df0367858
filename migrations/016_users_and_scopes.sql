-- Users and scopes (#24). A team's server knows its users by hashed bearer tokens; each memory
-- has an owner and a visibility. No users means today's single-user behaviour: every row is
-- ownerless and every reader sees everything.
--
-- Who is asking travels with each transaction, not with each statement: the server sets
-- `claude_memory.viewer` (the user's id), `claude_memory.viewer_projects` (the shared projects
-- they belong to, unit-separated; empty for all) and `claude_memory.default_visibility` with
-- set_config(..., true) when it opens a transaction for a user's request (server/store/tx.py).
-- Inserts stamp the owner from that setting (the column defaults below), and every read of
-- memories applies memory_visible(), so no statement has to be handed the caller.
CREATE TABLE users (
    id          serial      PRIMARY KEY,
    name        text        NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
    token_hash  text        NOT NULL UNIQUE,
    projects    text[],
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);

CREATE FUNCTION current_viewer() RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('claude_memory.viewer', true), '')::integer $$;

-- A reader sees a memory when no user is asking (single-user mode, batch jobs), when it is
-- theirs, or when it is shared (or ownerless, from before users) in a project they belong to.
CREATE FUNCTION memory_visible(owner integer, visibility text, project text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT coalesce(current_setting('claude_memory.viewer', true), '') = ''
        OR owner = nullif(current_setting('claude_memory.viewer', true), '')::integer
        OR ((owner IS NULL OR visibility = 'shared')
            AND (coalesce(current_setting('claude_memory.viewer_projects', true), '') = ''
                 OR project = ANY(string_to_array(
                     current_setting('claude_memory.viewer_projects', true), E'\x1f'))))
$$;

-- What a user's new memory is when the save does not say: the server's DEFAULT_VISIBILITY.
CREATE FUNCTION default_visibility() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT coalesce(nullif(current_setting('claude_memory.default_visibility', true), ''),
                      'shared') $$;

ALTER TABLE memories
    ADD COLUMN owner_id integer REFERENCES users (id) DEFAULT current_viewer(),
    ADD COLUMN visibility text NOT NULL DEFAULT default_visibility()
        CHECK (visibility IN ('private', 'shared'));

-- The same text saved by two users is two memories: one user's private copy must not hide
-- behind the other's. Ownerless rows (single-user mode, batch jobs) share the key 0.
CREATE UNIQUE INDEX memories_owner_content_hash_key ON memories (content_hash, coalesce(owner_id, 0));
DROP INDEX memories_content_hash_key;
CREATE INDEX memories_owner_idx ON memories (owner_id) WHERE owner_id IS NOT NULL;

-- Sessions and their journal belong to the user whose hooks or import brought them; the
-- journal's rows carry their own owner because hooks record calls and prompts before the
-- session's transcript is imported.
ALTER TABLE imported_sessions ADD COLUMN owner_id integer REFERENCES users (id)
    DEFAULT current_viewer();
ALTER TABLE session_events ADD COLUMN owner_id integer REFERENCES users (id)
    DEFAULT current_viewer();
ALTER TABLE journal_prompts ADD COLUMN owner_id integer REFERENCES users (id)
    DEFAULT current_viewer();
