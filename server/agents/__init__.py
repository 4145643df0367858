"""The coding agents claude-memory works with, one module each, listed in registry.py.

An agent is one unit: its module here says how `connect` registers the server in the agent's
own configuration (and installs our hooks, where it has them), and carries the reading half
from its reader module in server/ingest/ (where its sessions live, how they are read, which of
them a hook may name). Everything else (import's options, the hook route, connect's choices
and help) is made from the registry, so adding an agent is its modules plus one line there.
What each agent is (name, hooks, answers, tool names, instruction files) is its facts module in
server/agent_facts/, at the bottom of the layers; this package sits above jobs/ and ingest/,
whose parts it puts together. `doctor` (doctor.py, reading files with detect.py) lives here,
beside the agents it inspects.
"""
