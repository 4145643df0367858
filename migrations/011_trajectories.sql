-- Trajectories: how a task was done after failed attempts (task, what worked, what to avoid),
-- a memory kind of their own so search can label them and rank them with the facts.
ALTER TABLE memories DROP CONSTRAINT memories_kind_check;
ALTER TABLE memories ADD CONSTRAINT memories_kind_check
    CHECK (kind IN ('raw', 'distilled', 'note', 'preference', 'pattern', 'behavior', 'manual',
                    'trajectory'));
