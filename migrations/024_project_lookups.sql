-- A project found by its name or its folder without reading every memory (session 28).
--
-- The hooks map a session's working folder to its project on every prompt and tool call, and
-- every search, listing and MCP tool given a project reads the name through the same rule.
-- Both read the project list, which groups every live memory and so costs a scan of the whole
-- store (10 ms at 10,000 memories); the read cache holds it only until the next commit, and a
-- working session commits on every prompt (a receipt, the journal). These indexes answer the
-- same questions with one short index read per name or folder, the newest memory first.
CREATE INDEX memories_project_folded_idx
    ON memories (lower(project), created_at DESC) WHERE deleted_at IS NULL;
CREATE INDEX memories_project_folder_idx
    ON memories (lower(rtrim(project_path, '/')), created_at DESC)
    WHERE deleted_at IS NULL AND project_path <> '';
