"""List the folders agents keep their sessions in, without one unreadable folder stopping a scan.

Discovery walks folders the agent may be writing, renaming or pruning at that moment: a
folder that vanished is simply empty, one that cannot be read is logged and passed over.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

__all__ = ["file_size", "list_folder"]

logger = logging.getLogger(__name__)


def list_folder(directory: Path) -> list[os.DirEntry[str]]:
    """The entries of `directory`, unordered; none when it is missing or cannot be read."""
    try:
        with os.scandir(directory) as entries:
            return list(entries)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as err:
        logger.warning("cannot list %s: %s", directory, err.strerror)
        return []


def file_size(path: Path) -> int:
    """Bytes in `path` now; 0 when it is gone or cannot be read."""
    try:
        return path.stat().st_size
    except OSError:
        return 0
