"""MemoryService and its parts: the one API that every entry point calls."""
