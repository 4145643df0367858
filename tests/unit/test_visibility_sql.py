"""No statement of the store can forget whose memories it reads (#24).

Every function and SQL constant in server/store/ that reads or changes `memories`,
`imported_sessions`, the journal or `lessons` either carries a visibility condition (FILTER_SQL,
VISIBLE_SQL, visible(alias), OWNED_SQL, SESSION_VISIBLE_SQL, lesson_visible(), or
current_viewer() itself), or is listed below with the reason it needs none. A new statement
without either fails here, so the question "may this user see it?" is asked of every new query
when it is written.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

STORE = Path(__file__).resolve().parents[2] / "server" / "store"

TABLES = re.compile(
    r"\b(FROM|JOIN|UPDATE|INTO)\s+"
    r"(memories|imported_sessions|session_events|journal_prompts|lessons)\b"
)
MARKERS = (
    "FILTER_SQL",
    "VISIBLE_SQL",
    "visible(",
    "OWNED_SQL",
    "_SAME_OWNER",
    "SESSION_VISIBLE_SQL",
    "_SESSION_FILTER",
    "_SCOPE",
    "current_viewer()",
    "lesson_visible(",
)

JOB = "batch job: runs for nobody in particular, or as the session's owner (acting_as)"
STATS = "corpus statistics for ranking: counts and sizes, no content"
WRITE = "insert or vector write: the owner is stamped by the column default"
LINK = "supersession link by id: the service checks both ends are visible and owned first"
IMPORT = "import bookkeeping: which files, records and sessions were read"
ADMIN = "the users command itself (owner of all rows by definition)"

EXEMPT: dict[str, str] = {
    "anchors.index_waiting": JOB,
    "anchors.replace_anchors": WRITE,
    "claude_mem.legacy_memories": "reads claude-mem's own SQLite file, not our table",
    "embedding_model.clear_vectors_and_set_dimension": "reembed: a whole-store maintenance job",
    "embedding_model.count_missing_vectors": STATS,
    "embedding_model.memories_missing_vectors": JOB,
    "embedding_model.memories_without_statement_vectors": JOB,
    "embedding_model.add_statement_vectors": WRITE,
    "journal.insert_calls": IMPORT,
    "journal.insert_prompts": IMPORT,
    "journal.journal_owners": "whose each session is (owner ids), for the statements that use it",
    "learning.pending_sessions": JOB,
    "learning.archive": JOB,
    "learning.by_signal_keys": JOB,
    "learning.set_metadata": JOB,
    "learning.sessions_pending_signals": JOB,
    "learning.turns_of_sessions": JOB,
    "learning.events_of": JOB,
    "learning.project_paths": JOB,
    "learning.mark_signals_done": JOB,
    "learning.behavior_pending": JOB,
    "learning.forget_behavior_of": JOB,
    "learning.add_evidence": JOB,
    "learning.mark_behavior": JOB,
    "learning.mark_behavior_failed": JOB,
    "lessons.changed_sessions": JOB,
    "lessons.insert": WRITE,
    "lessons.update": "by id, after the service checked `ownership` under FOR UPDATE",
    "lessons.insert_proposed": JOB,
    "lessons.known_proposals": JOB,
    "memories._INSERT_SQL": WRITE,
    "memories.set_embeddings": WRITE,
    "memories.fill_missing_vectors": WRITE,
    "memories.count_all": "index upkeep: how many rows the vector indexes hold, no content",
    "search.document_frequencies": STATS,
    "search.live_count": STATS,
    "search.average_term_count": STATS,
    "sessions.known_project_names": IMPORT,
    "sessions._record_session": IMPORT,
    "stats.storage_sizes": STATS,
    "supersessions._RULE_PAIRS_SQL": JOB,
    "supersessions._OLDER_AGENT_SQL": "a column of the pair queries: whose session it came from",
    "supersessions.set_links": LINK,
    "supersessions.set_link": LINK,
    "supersessions.confirm_link": LINK,
    "supersessions.reject_link": LINK,
    "supersessions.cut_links_across_projects": LINK,
    "supersessions.chain_reaches": LINK,
    "supersessions.history": "version ids only; the versions are read through get_many",
    "supersessions.backfill_batch": JOB,
    "adaptation.source_texts": "adapt: one model for the whole server, trained from the command"
    " line on every memory",
    "users.list_all": ADMIN,
    "users.claim_unowned": ADMIN,
}


def _statements() -> dict[str, str]:
    """Each top-level function and constant of the store that touches the guarded tables."""
    found: dict[str, str] = {}
    for path in sorted(STORE.glob("*.py")):
        source = path.read_text()
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                name = node.name
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
            else:
                continue
            segment = ast.get_source_segment(source, node) or ""
            if TABLES.search(segment):
                found[f"{path.stem}.{name}"] = segment
    return found


def test_every_store_statement_says_whose_rows_it_may_touch() -> None:
    statements = _statements()
    unguarded = {
        name
        for name, segment in statements.items()
        if not any(marker in segment for marker in MARKERS)
    }
    forgotten = sorted(unguarded - EXEMPT.keys())
    assert not forgotten, (
        "these store statements read or change memories, sessions or the journal without a "
        f"visibility condition: {forgotten}; add VISIBLE_SQL / FILTER_SQL / OWNED_SQL (see "
        "server/store/visibility.py), or list them in EXEMPT with the reason"
    )


def test_the_exemptions_name_statements_that_still_exist_and_still_need_them() -> None:
    statements = _statements()
    stale = sorted(
        name
        for name in EXEMPT
        if name not in statements or any(marker in statements[name] for marker in MARKERS)
    )
    assert not stale, f"remove these from EXEMPT: {stale}"
