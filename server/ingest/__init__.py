"""Getting sessions in: pure readers, the importers that feed the service, and hook recall.

`claude_code` reads Claude Code transcripts, `claude_ai` the claude.ai data export and `text`
plain notes. The readers are pure: no database, no model, no network, so the importer can run
them on any file and tests can check every kept and dropped line against the fixtures.
`importer` and `documents` hand what the readers return to the service; `recall` answers the
Claude Code hooks and imports a session's transcript when it ends.
"""
