"""Memories checked against a working tree (issue #37), with the standard library only.

The server runs these checks when it shares the machine with its user; the hook client
(server/hooks.py, run with `python -I -S`) runs them when the server cannot (a team's server,
or one on another machine). So nothing here may import beyond the standard library and
server/core/redact.py (tests/unit/test_architecture.py checks it).
"""
