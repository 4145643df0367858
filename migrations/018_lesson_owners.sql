-- Lessons get an owner (#34). Until now every user could list, edit and switch off every
-- lesson, including those of projects they do not belong to. A lesson written by a user is
-- stamped with them (the column default, as for memories in 016); lessons from before users,
-- from the command line and from the hourly proposer stay ownerless.
--
-- Who sees a lesson (listing, and the PreToolUse hook, which applies only what its caller
-- sees) is decided here; who may change one is checked by the service (server/domain/lessons.py
-- `check_lesson_change`), which names in its refusal who may.
ALTER TABLE lessons
    ADD COLUMN owner_id integer REFERENCES users (id) DEFAULT current_viewer();

-- A reader sees a lesson when no user is asking (single-user mode, the command line, jobs),
-- when it is theirs, when it is for every project, or when it is for a project they belong to
-- (a user without a project list belongs to every project).
CREATE FUNCTION lesson_visible(owner integer, project text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT current_viewer() IS NULL
        OR owner = current_viewer()
        OR project = ''
        OR coalesce(current_setting('claude_memory.viewer_projects', true), '') = ''
        OR project = ANY(string_to_array(
            current_setting('claude_memory.viewer_projects', true), E'\x1f'))
$$;

-- Patterns are now matched with RE2 (linear time, no ReDoS), which has no lookaround. The
-- proposer wrote path boundaries as lookarounds; rewrite them, in patterns and in the proposal
-- keys that hold them, into what it writes now (server/learn/lesson_proposals.py `_joined`),
-- which matches the same calls: a boundary consumes the character before or after the path
-- (one that is not a word character, dot or dash) or meets the start or end of the input;
-- next to the ".*" between the parts of a command it is a character of the same line, since
-- ".*" never crosses a line; between two paths one such character may end the first and
-- start the second, and after a folder ("src/") a path may follow at once. Another pattern
-- RE2 cannot compile is left as written: the hook skips it, with one warning, until someone
-- edits it.
UPDATE lessons
SET pattern = replace(replace(replace(replace(replace(replace(pattern,
        '(?![\w.-]).*(?<![\w.-])', '[^\w.\n-](?:.*[^\w.\n-])?'),
        '/.*(?<![\w.-])', '/(?:.*[^\w.\n-])?'),
        '.*(?<![\w.-])', '.*[^\w.\n-]'),
        '(?![\w.-]).*', '[^\w.\n-].*'),
        '(?<![\w.-])', '(?:^|[^\w.-])'),
        '(?![\w.-])', '(?:[^\w.-]|$)'),
    proposal_key = replace(replace(replace(replace(replace(replace(proposal_key,
        '(?![\w.-]).*(?<![\w.-])', '[^\w.\n-](?:.*[^\w.\n-])?'),
        '/.*(?<![\w.-])', '/(?:.*[^\w.\n-])?'),
        '.*(?<![\w.-])', '.*[^\w.\n-]'),
        '(?![\w.-]).*', '[^\w.\n-].*'),
        '(?<![\w.-])', '(?:^|[^\w.-])'),
        '(?![\w.-])', '(?:[^\w.-]|$)')
WHERE strpos(pattern, '(?<![\w.-])') > 0 OR strpos(pattern, '(?![\w.-])') > 0;
