-- Lessons: what an agent should be reminded of, or asked about, before a tool call ("don't run
-- load tests against staging: use the local stack"). A lesson matches a call when its tool is
-- the call's (or '' for any tool), its pattern (a case-insensitive regular expression) is found
-- in the call's input, and its project is the call's (or '' for every project).
CREATE TABLE lessons (
    id         bigserial PRIMARY KEY,
    tool       text NOT NULL DEFAULT '',
    pattern    text NOT NULL CHECK (pattern <> ''),
    project    text NOT NULL DEFAULT '',
    message    text NOT NULL CHECK (message <> ''),
    strictness text NOT NULL DEFAULT 'warn' CHECK (strictness IN ('warn', 'ask')),
    origin     text NOT NULL DEFAULT 'user',
    active     boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lessons_active_idx ON lessons (project) WHERE active;
