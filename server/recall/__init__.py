"""The way out: what the agents' hooks are told, and the code check that vets it.

- `hook.py`: the hooks' server side (session start, prompt recall, lessons before a call, the
  journal of prompts and calls), one `HookRecall` per app, with the receipt of each injection;
- `cutoff.py`: which hits count (the similarity cut-off, the words rule, current versions);
- `working_tree.py`: recalled memories checked against the session's working tree;
- `search.py`: a search the adapters ask for, in its mode, each hit with its verdict;
- `memory_check.py`: one memory's verdict for the UI, and recording the current value.

How what they choose reads (the injected Markdown, within its budget) is
server/domain/context.py's. `server/ingest/` is the way in and never imports from here.
"""
