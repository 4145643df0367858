-- The starting schema: memories, imported sessions, and the embedding model record.
--
-- The embedding column is declared without a dimension here: the dimension belongs to the model,
-- which the server records in embedding_model on first start, fixing the column's type and
-- building the HNSW index then (server/store/embedding_model.py). `claude-memory reembed`
-- changes both when the model changes.

CREATE EXTENSION IF NOT EXISTS vector;

-- Lexemes for exact identifiers: ERR_POOL_TIMEOUT, --frozen-lockfile, withTransaction.ts,
-- snake_case and dotted.names. The default text-search parser splits these apart, so they are
-- also kept whole, lower-cased, with surrounding punctuation trimmed.
CREATE FUNCTION identifier_lexemes(content text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ARRAY(
    SELECT DISTINCT token
    FROM (
        SELECT btrim(piece, '.-/:') AS token
        FROM regexp_split_to_table(lower(left(content, 200000)), '[^a-z0-9_.\-/:]+') AS piece
    ) AS pieces
    WHERE length(token) BETWEEN 3 AND 200
      AND token ~ '[_.\-/:]'
      AND token ~ '[a-z]'
);

CREATE TABLE memories (
    id           bigserial PRIMARY KEY,
    content      text NOT NULL CHECK (btrim(content) <> ''),
    content_hash text NOT NULL,
    kind         text NOT NULL DEFAULT 'manual'
                 CHECK (kind IN ('raw', 'distilled', 'note', 'preference', 'pattern', 'behavior',
                                 'manual')),
    tags         text[] NOT NULL DEFAULT '{}',
    source       text NOT NULL DEFAULT '',
    project      text NOT NULL DEFAULT '',
    project_path text NOT NULL DEFAULT '',
    session_id   text,
    role         text,
    embedding    vector,
    tsv          tsvector GENERATED ALWAYS AS (
                     to_tsvector('english', content)
                     || array_to_tsvector(identifier_lexemes(content))
                 ) STORED,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    deleted_at   timestamptz,
    metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
    supersedes   bigint REFERENCES memories (id) ON DELETE SET NULL
);

-- Purging deletes the row, so "unique among rows that are not purged" is plain uniqueness.
CREATE UNIQUE INDEX memories_content_hash_key ON memories (content_hash);
CREATE INDEX memories_tsv_idx ON memories USING gin (tsv);
CREATE INDEX memories_tags_idx ON memories USING gin (tags);
CREATE INDEX memories_project_created_idx ON memories (project, created_at);
CREATE INDEX memories_source_idx ON memories (source);
CREATE INDEX memories_kind_idx ON memories (kind);
CREATE INDEX memories_session_idx ON memories (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX memories_live_created_idx ON memories (created_at DESC, id DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX memories_deleted_idx ON memories (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE imported_sessions (
    session_id              text PRIMARY KEY,
    source                  text NOT NULL DEFAULT 'claude-code',
    project                 text NOT NULL DEFAULT '',
    project_path            text NOT NULL DEFAULT '',
    file_path               text,
    bytes_imported          bigint NOT NULL DEFAULT 0 CHECK (bytes_imported >= 0),
    lines_imported          bigint NOT NULL DEFAULT 0 CHECK (lines_imported >= 0),
    message_count           integer NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    first_message_at        timestamptz,
    last_message_at         timestamptz,
    imported_at             timestamptz NOT NULL DEFAULT now(),
    distill_state           text NOT NULL DEFAULT 'pending'
                            CHECK (distill_state IN ('pending', 'done', 'failed', 'skipped')),
    distill_failures        integer NOT NULL DEFAULT 0,
    distill_last_error      text,
    distilled_at            timestamptz,
    distilled_message_count integer NOT NULL DEFAULT 0,
    signals_state           text NOT NULL DEFAULT 'pending'
                            CHECK (signals_state IN ('pending', 'done', 'failed')),
    signals_at              timestamptz,
    behavior_state          text NOT NULL DEFAULT 'pending'
                            CHECK (behavior_state IN ('pending', 'done', 'failed', 'skipped')),
    behavior_failures       integer NOT NULL DEFAULT 0,
    behavior_last_error     text,
    behavior_at             timestamptz
);

CREATE INDEX imported_sessions_project_idx ON imported_sessions (project);
CREATE INDEX imported_sessions_distill_idx ON imported_sessions (distill_state);

-- One row: the model the stored vectors were made with. state = 'reembedding' while
-- `claude-memory reembed` is under way, so an interrupted run is resumed, not trusted.
CREATE TABLE embedding_model (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    model       text NOT NULL,
    dimension   integer NOT NULL CHECK (dimension > 0),
    state       text NOT NULL CHECK (state IN ('ready', 'reembedding')),
    recorded_at timestamptz NOT NULL DEFAULT now()
);
