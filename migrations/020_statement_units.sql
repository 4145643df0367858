-- Statements as retrieval units (#33).
--
-- A memory that states several facts (a handbook chunk, a report of three changes, a turn that
-- answers and goes on) had one vector, or one per passage window of ~192 word pieces: a
-- question about one of its facts met an average of all of them. Now each of its statements
-- (server/domain/statements.py) also gets a row here, and semantic search keeps each memory's
-- best row as before, so the memory is ranked by its best statement.
--
-- `unit` tells the two kinds apart: a passage's vectors make up the memory's own (their mean),
-- a statement's do not. `memories.units_indexed` says whether a memory's statements have
-- their vectors: memories stored before this migration have not, and the server's background
-- task (server/service/vector_backfill.py) gives them theirs in batches, oldest first.

ALTER TABLE memory_chunks
    ADD COLUMN unit text NOT NULL DEFAULT 'passage' CHECK (unit IN ('passage', 'statement'));

ALTER TABLE memories ADD COLUMN units_indexed boolean NOT NULL DEFAULT false;

CREATE INDEX memories_units_waiting ON memories (id)
    WHERE NOT units_indexed AND embedding IS NOT NULL;
