-- A conversation turn (a raw memory with a session id) is also scored by keyword search on the
-- words of the two turns said before it in its session and subagent: `context_tsv` holds the
-- turn before's terms with weight B and the one before that's with weight C (scored at 0.5
-- and 0.25 of a term of its own; server/store/search.py). "Before" is the order of
-- (created_at, id), deleted and archived turns included, as for the vectors
-- (server/turn_context.py). Triggers keep it true on every write: an inserted turn reads the
-- turns before it; inserting, editing, re-kinding or purging a turn refreshes the two after
-- it, so a purged turn's words do not outlive it.

ALTER TABLE memories ADD COLUMN context_tsv tsvector;

-- Each session's turns in order: what both look-ups (before and after a turn) walk.
CREATE INDEX memories_session_turns_idx ON memories (session_id, created_at, id)
    WHERE kind = 'raw' AND session_id IS NOT NULL;

-- The terms of the two turns before the turn at (session, agent, created_at, id).
CREATE FUNCTION turn_context_terms(
    turn_session text, turn_agent text, turn_created timestamptz, turn_id bigint
) RETURNS tsvector LANGUAGE sql STABLE AS $$
    SELECT nullif(
        coalesce(setweight((array_agg(tsv ORDER BY created_at DESC, id DESC))[1], 'B'), '')
        || coalesce(setweight((array_agg(tsv ORDER BY created_at DESC, id DESC))[2], 'C'), ''),
        ''::tsvector)
    FROM (
        SELECT tsv, created_at, id FROM memories
        WHERE session_id = turn_session AND kind = 'raw'
          AND coalesce(metadata->>'agent_id', '') = turn_agent
          AND (created_at, id) < (turn_created, turn_id)
        ORDER BY created_at DESC, id DESC
        LIMIT 2
    ) AS before
$$;

CREATE FUNCTION memories_set_turn_context() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.kind = 'raw' AND NEW.session_id IS NOT NULL THEN
        NEW.context_tsv := turn_context_terms(
            NEW.session_id, coalesce(NEW.metadata->>'agent_id', ''), NEW.created_at, NEW.id);
    ELSE
        NEW.context_tsv := NULL;
    END IF;
    RETURN NEW;
END
$$;

-- The two turns after `changed` take their context again.
CREATE FUNCTION memories_refresh_next_turns() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed memories%ROWTYPE;
BEGIN
    IF TG_OP = 'DELETE' THEN
        changed := OLD;
    ELSE
        changed := NEW;
    END IF;
    -- A turn turning into another kind leaves its conversation: that is an UPDATE.
    IF changed.session_id IS NULL OR (TG_OP <> 'UPDATE' AND changed.kind <> 'raw') THEN
        RETURN NULL;
    END IF;
    UPDATE memories AS m
    SET context_tsv = turn_context_terms(
        m.session_id, coalesce(m.metadata->>'agent_id', ''), m.created_at, m.id)
    WHERE m.id IN (
        SELECT id FROM memories
        WHERE session_id = changed.session_id AND kind = 'raw'
          AND coalesce(metadata->>'agent_id', '') = coalesce(changed.metadata->>'agent_id', '')
          AND (created_at, id) > (changed.created_at, changed.id)
        ORDER BY created_at, id
        LIMIT 2
    );
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_set_turn_context
    BEFORE INSERT OR UPDATE OF kind, session_id, created_at, metadata ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_set_turn_context();

CREATE TRIGGER memories_refresh_next_turns
    AFTER INSERT OR DELETE OR UPDATE OF content, kind ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_refresh_next_turns();

-- The turns stored before this migration.
UPDATE memories AS m
SET context_tsv = ordered.context
FROM (
    SELECT id,
           nullif(coalesce(setweight(lag(tsv, 1) OVER turns, 'B'), '')
                  || coalesce(setweight(lag(tsv, 2) OVER turns, 'C'), ''), ''::tsvector)
               AS context
    FROM memories
    WHERE kind = 'raw' AND session_id IS NOT NULL
    WINDOW turns AS (
        PARTITION BY session_id, coalesce(metadata->>'agent_id', '') ORDER BY created_at, id)
) AS ordered
WHERE m.id = ordered.id AND ordered.context IS NOT NULL;
