"""Who may read and change a row of `memories` (migration 016), as SQL every store module
shares."""

from __future__ import annotations


# Whether the user this transaction acts for may read a row of `memories` (migration 016):
# always, when nobody in particular is asking. Every read of memories carries it; FILTER_SQL
# includes it, and tests/unit/test_visibility_sql.py fails on a statement that has neither.
def visible(alias: str) -> str:
    """The visibility condition for rows of `memories` read under `alias`."""
    return f"memory_visible({alias}.owner_id, {alias}.visibility, {alias}.project)"


VISIBLE_SQL = visible("memories")

# Whether they may change or delete it: only their own (anyone's when nobody is asking).
OWNED_SQL = "(current_viewer() IS NULL OR memories.owner_id = current_viewer())"
