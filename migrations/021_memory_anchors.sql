-- What each memory says about the code, stored with it (#37).
--
-- A memory's anchors (server/domain/anchors.py: the files, symbols, settings and versions it
-- names) are what the check against a working tree looks at. They were found in the text at
-- every check; now they are found once, when the memory is written (in the same
-- transaction), and kept here, one row per anchor in the order of the text, so a project's
-- memories that name code (the Drifted page) and the memories naming a file are found by
-- index instead of by reading every memory.
--
-- `memories.anchors_indexed` says whether a memory's anchors are stored: memories written
-- before this migration have not, and the server's background task
-- (server/service/vector_backfill.py) finds theirs in batches. A change to the anchor rules
-- ships with a migration that sets it back to false, so every memory is read again.

CREATE TABLE memory_anchors (
    memory_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    position  smallint NOT NULL,
    kind      text NOT NULL CHECK (kind IN ('path', 'symbol', 'setting', 'version')),
    name      text NOT NULL,
    value     text,
    PRIMARY KEY (memory_id, position)
);

CREATE INDEX memory_anchors_name_idx ON memory_anchors (name, kind);

ALTER TABLE memories ADD COLUMN anchors_indexed boolean NOT NULL DEFAULT false;

CREATE INDEX memories_anchors_waiting ON memories (id) WHERE NOT anchors_indexed;
