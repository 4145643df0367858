-- Whether the agent used what memory injected (#38).
--
-- When a session's transcript is imported, each memory a receipt (`injections`) names is judged
-- against what the agent did next (server/domain/use_judge.py): 'used' when the agent's tool
-- calls or its own words name the memory's distinctive terms, or it fetched the memory;
-- 'unused' when they do not; 'contradicted' when it was used and the user's next prompt
-- corrected the agent. `evidence` says which terms, in which call or words (no call text is
-- kept). One row per (receipt, memory); a later read of the same turn can only raise a
-- verdict (unused -> used -> contradicted).
--
-- Rows are their owner's like the receipt they judge, and go with it (retention).
-- `at` is the receipt's time: what prompt recall's learning decays by.

CREATE TABLE injection_uses (
    receipt_id bigint NOT NULL REFERENCES injections (id) ON DELETE CASCADE,
    memory_id  bigint NOT NULL,
    owner_id   integer REFERENCES users (id) DEFAULT current_viewer(),
    at         timestamptz NOT NULL,
    verdict    text NOT NULL CHECK (verdict IN ('unused', 'used', 'contradicted')),
    evidence   text NOT NULL DEFAULT '',
    judged_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (receipt_id, memory_id)
);

-- Prompt recall reads a few memories' verdicts (then keeps the asker's): by memory.
CREATE INDEX injection_uses_memory_idx ON injection_uses (memory_id);
