"""claude-memory: persistent, searchable memory for AI coding agents."""

__version__ = "0.1.0"
