-- What prompt recall listed beneath what it injected in full (#67).
--
-- Beneath the memories that pass the cut-off, the prompt hook lists the next candidates one
-- line each (statement, date, id, author) for the agent to open if they bear on its task.
-- `listed_ids` are those, in the order shown. When the agent opens one (`get_memory` of that
-- id in the same session, reported by the PostToolUse hook or read in the session's
-- transcript), the receipt's `injection_uses` row for it says 'used', so prompt recall learns
-- from the agent's own judgement. A line left unopened gets no verdict.

ALTER TABLE injections ADD COLUMN listed_ids bigint[] NOT NULL DEFAULT '{}';
