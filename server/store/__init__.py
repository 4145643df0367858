"""All SQL lives in this package: one function per statement; callers own the transaction."""
