-- The tool-call journal: every human prompt of a session, and for each tool call the prompt it
-- followed, a preview of its output and its error. Imports and hooks both write it: a prompt is
-- keyed by Claude Code's promptId (the prompt record's uuid before 2.1), a call by its
-- tool_use_id, so whichever arrives second completes the row instead of adding another.
CREATE TABLE journal_prompts (
    id         bigserial PRIMARY KEY,
    session_id text NOT NULL,
    prompt_key text NOT NULL,
    text       text NOT NULL,
    at         timestamptz,
    project    text NOT NULL DEFAULT '',
    UNIQUE (session_id, prompt_key)
);
CREATE INDEX journal_prompts_project_at_idx ON journal_prompts (project, at);

-- A hook reports a call without the transcript record that holds it.
ALTER TABLE session_events
    ALTER COLUMN record_uuid DROP NOT NULL,
    ADD COLUMN prompt_key text,
    ADD COLUMN output_preview text,
    ADD COLUMN error text;
CREATE INDEX session_events_prompt_idx ON session_events (session_id, prompt_key);
CREATE INDEX session_events_project_at_idx ON session_events (project, at);
