-- Batch jobs that several processes may run at once (two `distill` runners, an hourly pipeline
-- beside a manual run, server replicas) take a lease on each item before working on it: one
-- row per (job, item), held by one runner until it releases it or `expires_at` passes. A
-- runner renews its leases while it works, so a crashed runner's items are picked up by the
-- next run once their lease expires, and a live runner's are never taken.
CREATE TABLE job_leases (
    job        text        NOT NULL,
    item       text        NOT NULL,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (job, item)
);
