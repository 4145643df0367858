"""Models adapted to the user's language (`claude-memory adapt`): where they live, which is in use.

Each adaptation is a folder `$CLAUDE_MEMORY_HOME/models/adapted-<n>/`: a sentence-transformers
model saved whole, with `adaptation.json` beside it (the manifest: base model, the model it
replaced, pairs, epochs, rate, date, training time). The file `models/active` names the folder
in use; without it the configured model itself is used. The server loads the folder named
there on start (never from a hub), as long as the configured model is the one it was adapted
from; the vectors record it as `<base>+adapted-<n>`, so a store is never searched with another
model's vectors. Folders are kept after a rollback: nothing is deleted but a half-written one.
Loading a model runs what its folder holds, so the name in `models/active` and a manifest's
`previous` must be an `adapted-<n>` folder right inside `models/` (#65): a path to anywhere
else (`../../elsewhere/model`, an absolute one, a link out) stops the start with a message.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.core.errors import StartupError
from server.service.embeddings import canonical_model_name

logger = logging.getLogger(__name__)

MODELS_DIR = "models"
ACTIVE_FILE = "active"
MANIFEST_FILE = "adaptation.json"
_NAME = re.compile(r"adapted-(\d+)")


@dataclass(frozen=True, slots=True)
class AdaptedModel:
    name: str  # the folder: adapted-<n>
    path: Path
    manifest: dict[str, Any]

    @property
    def base(self) -> str:
        return str(self.manifest["base"])

    @property
    def previous(self) -> str | None:
        """The adapted model this one replaced; None: the base model itself."""
        value = self.manifest.get("previous")
        return str(value) if value else None

    @property
    def cutoffs(self) -> dict[str, float] | None:
        """The similarity cut-offs carried over to this model when it was trained (None: made
        before they were; the base model's are used)."""
        value = self.manifest.get("cutoffs")
        return {str(k): float(v) for k, v in value.items()} if isinstance(value, dict) else None

    @property
    def recorded_name(self) -> str:
        """The model name recorded with the vectors it made."""
        return f"{self.base}+{self.name}"


def models_dir(home: Path) -> Path:
    return home / MODELS_DIR


def read_model(home: Path, name: str) -> AdaptedModel:
    """The adapted model in folder `name` of `models/`; StartupError when `name` is not one
    of our folders there or its manifest cannot be read."""
    path = model_path(home, name)
    try:
        manifest = json.loads((path / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StartupError(
            f"the adapted model {path} cannot be read ({exc}); remove "
            f"{models_dir(home) / ACTIVE_FILE} to use the configured model"
        ) from None
    return AdaptedModel(name, path, manifest)


def model_path(home: Path, name: str) -> Path:
    """The folder `name` (`adapted-<n>`) inside `models/`, through links only when they stay
    there; StartupError for anything else."""
    folder = models_dir(home)
    path = folder / name
    try:
        inside = _NAME.fullmatch(name) is not None and path.resolve().parent == folder.resolve()
    except (OSError, RuntimeError, ValueError):
        inside = False
    if not inside:
        raise StartupError(
            f"{name[:120]!r} is not an adapted model's folder inside {folder}; only adapted-<n>"
            f" folders there are loaded: remove {folder / ACTIVE_FILE} to use the configured model"
        )
    return path


def active_name(home: Path) -> str | None:
    """The folder `models/active` names, or None."""
    try:
        name = (models_dir(home) / ACTIVE_FILE).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return name or None


def active_model(home: Path, configured: str) -> AdaptedModel | None:
    """The adapted model in use, or None: none adapted, or adapted from another model than the
    `configured` one (then the configured model is used, with a warning)."""
    name = active_name(home)
    if name is None:
        return None
    model = read_model(home, name)
    if model.base != canonical_model_name(configured):
        logger.warning(
            "ignoring the adapted model %s: it was adapted from %s, but the configured model is %s",
            model.path,
            model.base,
            configured,
        )
        return None
    return model


def carried_cutoffs(home: Path, recorded_name: str) -> dict[str, float] | None:
    """The cut-offs carried over to the adapted model that recorded `recorded_name` (as
    `<base>+adapted-<n>`), or None: not an adapted model, or one without them."""
    base, _, name = recorded_name.partition("+")
    if not base or not _NAME.fullmatch(name):
        return None
    try:
        return read_model(home, name).cutoffs
    except StartupError:
        return None


def set_active(home: Path, name: str | None) -> None:
    """Make `name` the model in use (None: the configured model itself), atomically."""
    pointer = models_dir(home) / ACTIVE_FILE
    if name is None:
        pointer.unlink(missing_ok=True)
        return
    pointer.parent.mkdir(parents=True, exist_ok=True)
    partial = pointer.with_name(ACTIVE_FILE + ".new")
    partial.write_text(name + "\n", encoding="utf-8")
    os.replace(partial, pointer)


def next_name(home: Path) -> str:
    """`adapted-<n>` one past the highest folder there is."""
    folder = models_dir(home)
    numbers = [
        int(match.group(1))
        for entry in (folder.iterdir() if folder.is_dir() else ())
        if (match := _NAME.fullmatch(entry.name))
    ]
    return f"adapted-{max(numbers, default=0) + 1}"
