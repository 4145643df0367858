"""The MCP tools the server serves, by name: the whole set, on every transport (SSE,
streamable HTTP, stdio). A tool added or renamed changes this set and the tests that walk it.
"""

TOOLS = {
    "startup_context",
    "save_memory",
    "check_memory",
    "semantic_search",
    "search_memories",
    "hybrid_search",
    "list_memories",
    "get_memory",
    "recent_context",
    "update_memory",
    "delete_memory",
    "restore_memory",
    "purge_memory",
    "find_duplicates",
    "bulk_delete",
    "list_tags",
    "get_stats",
    "export_memories",
    "journal",
    "list_lessons",
    "save_lesson",
    "learn",
}
