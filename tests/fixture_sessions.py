"""The shared fixtures beside the repository and the Claude Code sessions in them, named once
for every test group.

SHARED_FIXTURES    ../shared/fixtures (Claude Code sessions, hooks' payloads, the claude.ai
                   export, notes)
CLAUDE_PROJECTS    its Claude Code projects folder, as `import --claude-code` reads it
API, WEB           the two projects in it: acme-api and acme's web UI
S1, S2, S3, S4     the sessions' ids: S1 to S3 acme-api's (S1 of 14 April 2026, S3 the session
                   of every hook payload), S4 the web UI's
S1_FILE .. S4_FILE their transcripts; S2_AGENT and S4_AGENT the sub-agents' transcripts
"""

from __future__ import annotations

from pathlib import Path

SHARED_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
CLAUDE_PROJECTS = SHARED_FIXTURES / "claude-code" / "projects"
API = CLAUDE_PROJECTS / "-home-dev-acme-api"
WEB = CLAUDE_PROJECTS / "-home-dev-work-acme-web-ui"

S1 = "3f6c2a1e-8b4d-4c9e-a1f7-2d5e9b0c7a41"  # acme-api, 14 April 2026
S2 = "9b2d7e40-51c3-4f8a-b6e2-7d0c14a9e385"
S3 = "c71e5d08-2a6f-4b1d-9e34-58f0b2c6d917"  # the session of the hook payloads' session_id
S4 = "5e0a9d3c-7f21-4c68-8b0e-e93a6d1f4b72"  # acme's web UI

S1_FILE = API / f"{S1}.jsonl"
S2_FILE = API / f"{S2}.jsonl"
S3_FILE = API / f"{S3}.jsonl"
S4_FILE = WEB / f"{S4}.jsonl"
S2_AGENT = API / S2 / "subagents" / "agent-a3f9c1e27b6d40581.jsonl"
S4_AGENT = WEB / "agent-1f2e3d4c.jsonl"
