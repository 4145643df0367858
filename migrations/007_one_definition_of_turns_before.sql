-- "The turns said before a turn" had two definitions: migration 006's turn_context_terms (the
-- words keyword search adds to a turn) and the query server/store/memories.py ran to blend a
-- turn's vector with the turns before it. Both now read this one function, so the two can no
-- longer disagree on which turns come before.
--
-- The turns before the turn at (session, agent, created_at, id): raw memories of the same
-- session and subagent, earlier by (created_at, id), deleted and archived ones included
-- (forgetting a turn does not change what was said), nearest first. A plain SQL function, so
-- the planner inlines it and walks memories_session_turns_idx.
CREATE FUNCTION turns_before(
    turn_session text, turn_agent text, turn_created timestamptz, turn_id bigint, how_many int
) RETURNS TABLE (id bigint, content text, tsv tsvector, created_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT m.id, m.content, m.tsv, m.created_at FROM memories AS m
    WHERE m.session_id = turn_session AND m.kind = 'raw'
      AND coalesce(m.metadata->>'agent_id', '') = turn_agent
      AND (m.created_at, m.id) < (turn_created, turn_id)
    ORDER BY m.created_at DESC, m.id DESC
    LIMIT how_many
$$;

-- The terms of the two turns before: the nearer with weight B, the other with weight C.
CREATE OR REPLACE FUNCTION turn_context_terms(
    turn_session text, turn_agent text, turn_created timestamptz, turn_id bigint
) RETURNS tsvector LANGUAGE sql STABLE AS $$
    SELECT nullif(
        coalesce(setweight((array_agg(tsv ORDER BY created_at DESC, id DESC))[1], 'B'), '')
        || coalesce(setweight((array_agg(tsv ORDER BY created_at DESC, id DESC))[2], 'C'), ''),
        ''::tsvector)
    FROM turns_before(turn_session, turn_agent, turn_created, turn_id, 2)
$$;
