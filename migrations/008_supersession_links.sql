-- Supersession: a newer memory states a changed version of a fact an older one states ("the
-- minimum Node version is 22" after "... is 20"). The link lives on the newer memory, in the
-- `supersedes` column that 001 created; an older memory counts as superseded while a live
-- memory links to it. `supersede_reason` says why in a few words ("number 20 -> 22", "set by
-- the user"); `supersede_rejected` holds the older memories a user unlinked from this one, so
-- the rules never link them again.
ALTER TABLE memories
    ADD COLUMN supersede_reason text NOT NULL DEFAULT '',
    ADD COLUMN supersede_rejected bigint[] NOT NULL DEFAULT '{}';
CREATE INDEX memories_supersedes_idx ON memories (supersedes) WHERE supersedes IS NOT NULL;

-- Memories stored before this migration get their links from a resumable backfill
-- (server/supersessions.py): it walks ids up to `up_to_id` in batches and records in
-- `done_id` how far it got, so an interrupted run goes on where it stopped.
CREATE TABLE supersession_backfill (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    up_to_id bigint NOT NULL,
    done_id  bigint NOT NULL DEFAULT 0
);
INSERT INTO supersession_backfill (up_to_id) SELECT coalesce(max(id), 0) FROM memories;
