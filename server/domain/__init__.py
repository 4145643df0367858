"""Pure rules about memories, no I/O: supersession, versions, dates, formats."""
