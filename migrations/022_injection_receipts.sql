-- Receipts for what memory injects into an agent's context (#38).
--
-- Every time a hook adds memory to the context (the session-start context, prompt recall, the
-- lessons before a tool call), one row says when, in which session (and prompt), for which
-- project, which memories (or lessons) in which order, how many characters and an estimated
-- token count, and for prompt recall the cut-off and each memory's similarity. No text is
-- kept: the memories are referred to by id, so nothing here needs redacting.
--
-- Rows are the user's own (`owner_id`, stamped by the column default like every other row),
-- read only by them (single-user mode: by everyone). They are kept RECEIPTS_RETENTION_DAYS
-- (pruned by the server), and 0 keeps none.

CREATE TABLE injections (
    id         bigserial PRIMARY KEY,
    owner_id   integer REFERENCES users (id) DEFAULT current_viewer(),
    at         timestamptz NOT NULL DEFAULT now(),
    hook       text NOT NULL CHECK (hook IN ('session_start', 'prompt', 'lessons')),
    session_id text NOT NULL DEFAULT '',
    prompt_id  text NOT NULL DEFAULT '',
    project    text NOT NULL DEFAULT '',
    memory_ids bigint[] NOT NULL DEFAULT '{}',
    lesson_ids bigint[] NOT NULL DEFAULT '{}',
    scores     real[] NOT NULL DEFAULT '{}',
    cutoff     real,
    chars      integer NOT NULL CHECK (chars >= 0),
    tokens     integer NOT NULL CHECK (tokens >= 0)
);

CREATE INDEX injections_owner_at_idx ON injections (coalesce(owner_id, 0), at DESC);
CREATE INDEX injections_session_idx ON injections (session_id, at);
CREATE INDEX injections_at_idx ON injections (at);
