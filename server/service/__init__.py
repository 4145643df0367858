"""MemoryService and its parts: the one API that every entry point calls.

`MemoryService` (memory.py) is one object over one pool, embedder, settings and read cache.
Its verbs are written in ten classes, one a file, that it inherits; each reaches the pool, the
cache and the project rule (`resolve_project`) through `self`, and several call each other's
methods (a save resolves its project, a lesson check reads the lessons), so they stay one
object rather than parts each caller would have to name. Which file holds a verb:

    file            class          public methods
    memory.py       MemoryService  search_semantic, search_keyword, search_hybrid,
                                   recall_evidence, prompt_recall, unknown_names,
                                   related, versions,
                                   find_duplicates, list_memories, tags, vectors_waiting,
                                   reset_distill_failures, stats, export, projects,
                                   recent_context, startup_context, database_ok,
                                   invalidate_cache
    writes.py       Writes         save, learn, check, update, set_locked, restore_links, get,
                                   get_many, soft_delete, restore, purge, bulk_soft_delete
    bulk_writes.py  BulkWrites     save_many, import_state, stored_record_uuids,
                                   vector_indexes_after, import_files
    views.py        Views          anchors, timeline, sessions, preferences
    journal.py      ToolJournal    record_calls, record_prompts, journal
    lessons.py      Lessons        lessons, add_lesson, update_lesson, lessons_for_call
    receipts.py     Receipts       record_injection, record_prompt_turn, injected_tokens,
                                   context_report, receipts
    uses.py         Uses           judge_injections, open_listed
    promotions.py   Promotions     promoted_lines, record_promoted, use_records
    projects.py     ProjectRule    resolve_project, session_folders, project_at_folder,
                                   claim_folder, name_folder

(tests/unit/test_service_parts.py keeps this table true.) The jobs' own steps and the
service's machinery are composed parts instead, reached by attribute: `learning`
(learning.py, LearningSteps: distill, signals, behaviour), `lesson_proposals` (lessons.py),
`leases` (leases.py), `vectors` (vector_backfill.py), `users` (users.py), `searcher`
(search.py), `reranking` (rerank.py), `cache` (cache.py) and `cutoffs` (cutoffs.py).

What the adapters may call is the face, `MemoryApi` (face.py).
"""
