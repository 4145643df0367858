-- The journal keyed per owner (#34). A call was one row per tool_use_id and a prompt one row
-- per (session_id, prompt_key), whoever sent it: a teammate who posted a hook with someone
-- else's ids completed, or changed, their row. Now each owner has their own row for an id, so
-- a forged hook only ever makes a row of its sender's. Ownerless rows (single-user mode, batch
-- imports acting for no one, everything from before users) share the key 0, as memories do;
-- an import and the hooks of the same owner still complete one row between them.
CREATE UNIQUE INDEX session_events_owner_tool_use_key
    ON session_events (tool_use_id, coalesce(owner_id, 0));
ALTER TABLE session_events DROP CONSTRAINT session_events_tool_use_id_key;

CREATE UNIQUE INDEX journal_prompts_owner_key
    ON journal_prompts (session_id, prompt_key, coalesce(owner_id, 0));
ALTER TABLE journal_prompts DROP CONSTRAINT journal_prompts_session_id_prompt_key_key;
