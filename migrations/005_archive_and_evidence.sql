-- Distillation archives the raw turns it has read: they stay stored, searchable on request and
-- visible in a session's view, but default searches and lists leave them out.
ALTER TABLE memories ADD COLUMN archived_at timestamptz;

CREATE INDEX memories_session_unarchived_idx ON memories (session_id, created_at)
    WHERE session_id IS NOT NULL AND archived_at IS NULL AND deleted_at IS NULL;

-- Learned-memory lookups by their stable key (signals update their pattern memories in place).
CREATE INDEX memories_signal_key_idx ON memories ((metadata->>'signal_key'))
    WHERE metadata ? 'signal_key';
