-- Lessons proposed from the journal (server/learn/lesson_proposals.py) wait for the user: they
-- are stored inactive with `proposed` set until the user enables (accepts) or disables
-- (dismisses) them. `proposal_key` is the tool, project and pattern a lesson was first proposed
-- with; it stays when the user edits the lesson, so neither an edited nor a dismissed proposal
-- is proposed again.
ALTER TABLE lessons
    ADD COLUMN proposed boolean NOT NULL DEFAULT false,
    ADD COLUMN proposal_key text;
CREATE UNIQUE INDEX lessons_proposal_key_idx ON lessons (proposal_key)
    WHERE proposal_key IS NOT NULL;

-- How much of each session's journal the proposer has read (its prompts and calls), so that an
-- hourly run reads only the sessions that changed since.
CREATE TABLE lesson_proposal_sessions (
    session_id text PRIMARY KEY,
    prompts    integer NOT NULL,
    calls      integer NOT NULL,
    read_at    timestamptz NOT NULL DEFAULT now()
);
