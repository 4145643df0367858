-- Read positions and session rows keyed per owner (#54). A file's read position was one row
-- per path and a session one row per id, kept by whoever imported it first: after carol's
-- `import --user carol` read a folder alice's transcript was in, alice's own import found the
-- file read already ("0 turns, unchanged"), and the session row stayed carol's, which hid
-- alice's journal of that session from her. Now each owner has their own row for a path and
-- for a session id, as memories (016) and the journal (017) do; ownerless rows (single-user
-- mode, imports acting for nobody, everything from before users) share the key 0, so a store
-- without users reads and writes exactly the rows it did before.

-- A read position belongs to the owner of its session's row, as the import that wrote it did.
ALTER TABLE imported_files ADD COLUMN owner_id integer REFERENCES users (id)
    DEFAULT current_viewer();
UPDATE imported_files AS f SET owner_id = s.owner_id
FROM imported_sessions AS s
WHERE s.session_id = f.session_id AND s.owner_id IS NOT NULL;

CREATE UNIQUE INDEX imported_files_owner_path_key
    ON imported_files (file_path, coalesce(owner_id, 0));
ALTER TABLE imported_files DROP CONSTRAINT imported_files_pkey;

CREATE UNIQUE INDEX imported_sessions_owner_key
    ON imported_sessions (session_id, coalesce(owner_id, 0));
ALTER TABLE imported_sessions DROP CONSTRAINT imported_sessions_pkey;
