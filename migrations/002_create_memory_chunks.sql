-- Vectors for passages of long memories.
--
-- The model reads at most 256 tokens, so one vector per memory would leave the rest of a long
-- memory unfindable by meaning. A memory longer than one window gets a row here per window of
-- its text (memories.embedding then holds the normalised mean of them, for the write guard
-- and related-memory look-ups). Semantic search looks in both tables and keeps each memory's
-- best match. As with memories.embedding, the dimension is fixed by the recorded model.

CREATE TABLE memory_chunks (
    memory_id   bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    chunk_index integer NOT NULL CHECK (chunk_index >= 0),
    start_char  integer NOT NULL CHECK (start_char >= 0),
    end_char    integer NOT NULL CHECK (end_char > start_char),
    embedding   vector,
    PRIMARY KEY (memory_id, chunk_index)
);
