-- A user shares memories only into projects they belong to (#34). Before this, a user of
-- project "other" could save {"project": "acme", "visibility": "shared"} and their text reached
-- every acme member's lists, searches and session-start context.
--
-- The rule lives here, not in each write path, because memories are written by saves, bulk
-- saves, edits that move a memory to another project, imports and distillation, all through
-- `memories` with the user's settings on the transaction (server/store/tx.py).

-- Whether the transaction's user may share into `project`: anyone when no user is asking
-- (single-user mode, the command line, jobs acting for nobody), a user without a project list
-- anywhere, and any other user only into their own projects.
CREATE FUNCTION viewer_may_share(project text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT current_viewer() IS NULL
        OR coalesce(current_setting('claude_memory.viewer_projects', true), '') = ''
        OR project = ANY(string_to_array(
            current_setting('claude_memory.viewer_projects', true), E'\x1f'))
$$;

-- A new memory's visibility: the one asked for, else the server's default, except that a
-- default of "shared" into a project the user is not in stores it private (nobody asked to
-- share it; refusing the save would lose it).
CREATE FUNCTION new_memory_visibility(requested text, project text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT coalesce(requested,
                    CASE WHEN viewer_may_share(project) THEN default_visibility()
                         ELSE 'private' END)
$$;

-- An explicit share into a foreign project, or an edit that moves a shared memory there or
-- shares it there, is refused with SQLSTATE CM403, which server/store/tx.py reports as 403.
CREATE FUNCTION refuse_foreign_share() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.visibility = 'shared' AND NOT viewer_may_share(NEW.project)
       AND (TG_OP = 'INSERT' OR NEW.project IS DISTINCT FROM OLD.project
            OR NEW.visibility IS DISTINCT FROM OLD.visibility) THEN
        RAISE EXCEPTION USING
            ERRCODE = 'CM403',
            MESSAGE = format(
                'you may share memories only into your projects (%s), and %s is not one of'
                ' them: save it as private instead',
                replace(current_setting('claude_memory.viewer_projects', true), E'\x1f', ', '),
                CASE WHEN NEW.project = '' THEN 'a memory without a project'
                     ELSE format('project "%s"', NEW.project) END);
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER memories_share_only_into_member_projects
    BEFORE INSERT OR UPDATE OF project, visibility ON memories
    FOR EACH ROW EXECUTE FUNCTION refuse_foreign_share();
