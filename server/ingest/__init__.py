"""Readers that turn session files into typed values, and nothing else.

`claude_code` reads Claude Code transcripts, `claude_ai` the claude.ai data export and `text`
plain notes. They are pure: no database, no model, no network, so the importer can run them on
any file and tests can check every kept and dropped line against the fixtures.
"""
