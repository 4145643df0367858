-- Which provider made the stored vectors, beside the model's name: the bundled model in this
-- process (`local`) or an OpenAI-compatible endpoint (`openai`). Vectors from the same model
-- name served elsewhere may differ (another build, another quantisation), so a change of
-- provider is a change of model: the server refuses to start until `claude-memory reembed`.
ALTER TABLE embedding_model ADD COLUMN provider text NOT NULL DEFAULT 'local';

-- Memories saved while an embeddings endpoint was down wait with no vector until the server's
-- background task embeds them (server/service/vector_backfill.py); /health counts them often.
CREATE INDEX memories_waiting_for_vector_idx ON memories (id) WHERE embedding IS NULL;
