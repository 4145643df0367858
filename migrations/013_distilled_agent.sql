-- A distilled memory records the agent of the session it came from (`metadata.agent`), so a
-- filter for one agent (source = 'codex') finds the facts distilled from that agent's sessions
-- too. Memories distilled before this migration get it from their session.
UPDATE memories AS m
SET metadata = m.metadata || jsonb_build_object('agent', s.source)
FROM imported_sessions AS s
WHERE m.source = 'distill'
  AND m.session_id = s.session_id
  AND NOT m.metadata ? 'agent';
