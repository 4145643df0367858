-- What the importers need beyond migration 001.
--
-- imported_files: how far each transcript file has been read. A session has one main file and
-- any number of sub-agent files, each with its own offset; imported_sessions keeps the
-- session-level summary the UI shows.
CREATE TABLE imported_files (
    file_path      text PRIMARY KEY,
    session_id     text NOT NULL,
    agent_id       text,
    source         text NOT NULL DEFAULT 'claude-code',
    bytes_imported bigint NOT NULL DEFAULT 0 CHECK (bytes_imported >= 0),
    lines_imported bigint NOT NULL DEFAULT 0 CHECK (lines_imported >= 0),
    updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX imported_files_session_idx ON imported_files (session_id);

-- The session's title (Claude Code's ai-title, a claude.ai conversation name).
ALTER TABLE imported_sessions ADD COLUMN title text;

-- Tool calls, kept compactly for habit mining: which tool, on what, and whether it worked
-- (NULL until the result is read; a result can arrive in a later read of the file).
CREATE TABLE session_events (
    id          bigserial PRIMARY KEY,
    session_id  text NOT NULL,
    agent_id    text,
    record_uuid text NOT NULL,
    tool_use_id text NOT NULL UNIQUE,
    tool        text NOT NULL,
    target      text,
    success     boolean,
    at          timestamptz,
    project     text NOT NULL DEFAULT ''
);

CREATE INDEX session_events_session_idx ON session_events (session_id);
CREATE INDEX session_events_project_tool_idx ON session_events (project, tool);

-- Raw turns carry the transcript record's uuid in metadata; resumed and forked sessions repeat
-- records, and this finds them before anything is embedded.
CREATE INDEX memories_record_uuid_idx ON memories ((metadata->>'record_uuid'))
    WHERE metadata ? 'record_uuid';
