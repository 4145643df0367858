"""#65: paths that come from text someone else may have written, followed out of where they
belong, each tried as the attacker would with real files in the test's folder.

- A memory's text names `src/../../../private/deploy.conf`: the working-tree check (the
  server's own in single-user mode, the hook client's on a team's server) must not read a
  file outside the repository, so nothing of it reaches the agent's context.
- `models/active` or an adapted model's manifest names `../../elsewhere/model`: no model is
  loaded from outside `models/` (loading a model runs what its folder holds).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest

from server.app import create_app
from server.core.access import acting_as
from server.core.config import Settings
from server.service.adapted_models import ACTIVE_FILE, MANIFEST_FILE, models_dir
from server.service.embeddings import model_source
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.git_history import MEMORIES_WRITTEN, acme_repository
from tests.integration.hook_runs import context_of, payload, run_hook
from tests.integration.processes import run_cli

pytestmark = pytest.mark.security

OUTSIDE_NAME = "src/../../../private/deploy.conf"
DEPLOY = f"`DEPLOY_HOST=staging-db` is set in {OUTSIDE_NAME} for every deploy."
PROMPT = f"Which DEPLOY_HOST do our deploys use? It is in {OUTSIDE_NAME}."
PRIVATE_HOST = "db-7.corp-internal.example"
BASE = "all-MiniLM-L6-v2"


@pytest.mark.parametrize("on_a_team", [False, True], ids=["server-checks", "hook-checks"])
async def test_the_working_tree_check_reads_no_file_outside_the_repository(
    service: MemoryService, settings: Settings, tmp_path: Path, on_a_team: bool
) -> None:
    repo = acme_repository(tmp_path / "work" / "acme-api")
    private = tmp_path / "private" / "deploy.conf"
    private.parent.mkdir()
    private.write_text(f"DEPLOY_HOST={PRIVATE_HOST}\n")
    assert (repo / OUTSIDE_NAME).resolve() == private
    env: dict[str, str] = {}
    acting = nullcontext()
    if on_a_team:  # a team's server sends the anchors; the hook process reads the files
        alice, _ = await service.users.add("alice", ["acme-api"])
        env = {"CLAUDE_MEMORY_TOKEN": alice.token}
        acting = acting_as(service.users.viewer(alice.user))
    with acting:
        await service.save(
            DEPLOY, project="acme-api", project_path=str(repo), created_at=MEMORIES_WRITTEN
        )
    wide = replace(settings, recall_threshold=0.05, recall_max_hits=8, recall_max_chars=6_000)

    async with serving(create_app(wide, service)) as url:
        prompt = {"session_id": "s-outside", "cwd": str(repo), "prompt": PROMPT}
        recalled = await run_hook(
            "user-prompt-submit", {**payload("UserPromptSubmit"), **prompt}, url, env
        )

    context = context_of(recalled, "UserPromptSubmit")
    assert PRIVATE_HOST not in context, "a file outside the repository was read"
    [line] = [line for line in context.splitlines() if "DEPLOY_HOST=staging-db" in line]
    assert "drifted" not in line


def outside_model(folder: Path) -> Path:
    """A complete model (the bundled one's files, linked) with an adapted model's manifest, in
    a folder outside `models/`: what loads without complaint if it is followed."""
    folder.mkdir(parents=True)
    source = Path(model_source(BASE))
    for entry in source.iterdir():
        (folder / entry.name).symlink_to(entry)
    (folder / MANIFEST_FILE).write_text(json.dumps({"name": "model", "base": BASE}))
    return folder


def recorded_models(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        table = conn.execute("SELECT to_regclass('public.embedding_model')").fetchone()
        if table is None or table[0] is None:
            return []
        return [str(row[0]) for row in conn.execute("SELECT model FROM embedding_model")]


@pytest.mark.parametrize("pointer", ["../../elsewhere/model", "absolute"])
def test_models_active_naming_a_folder_outside_models_loads_nothing(
    fresh_database: Callable[[], str], tmp_path: Path, pointer: str
) -> None:
    home = tmp_path / "home"
    elsewhere = outside_model(tmp_path / "elsewhere" / "model")
    models_dir(home).mkdir(parents=True)
    named = str(elsewhere) if pointer == "absolute" else pointer
    (models_dir(home) / ACTIVE_FILE).write_text(named + "\n")
    assert (models_dir(home) / named).resolve() == elsewhere
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploys.md").write_text("# Deploys\nDeploys go out from main every Tuesday.\n")
    url = fresh_database()
    env = {"CLAUDE_MEMORY_DATABASE_URL": url, "CLAUDE_MEMORY_HOME": str(home)}

    done = run_cli("import", "--text", str(notes), "--json", env=env)

    assert not any("elsewhere" in model for model in recorded_models(url)), recorded_models(url)
    assert done.returncode == 1, done.stdout
    [error] = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert "is not an adapted model's folder inside" in error, done.stderr
    assert "Traceback" not in done.stderr


def test_a_manifests_previous_outside_models_is_not_rolled_back_to(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    outside_model(tmp_path / "elsewhere" / "model")
    current = models_dir(home) / "adapted-1"
    current.mkdir(parents=True)
    manifest = {"name": "adapted-1", "base": BASE, "previous": "../../elsewhere/model"}
    (current / MANIFEST_FILE).write_text(json.dumps(manifest))
    (models_dir(home) / ACTIVE_FILE).write_text("adapted-1\n")
    url = fresh_database()
    env = {"CLAUDE_MEMORY_DATABASE_URL": url, "CLAUDE_MEMORY_HOME": str(home)}

    done = run_cli("adapt", "--rollback", env=env)

    assert (models_dir(home) / ACTIVE_FILE).read_text() == "adapted-1\n"
    assert not any("elsewhere" in model for model in recorded_models(url)), recorded_models(url)
    assert done.returncode == 1, done.stdout
    assert "'../../elsewhere/model' is not an adapted model's folder inside" in done.stderr
    assert set(os.listdir(models_dir(home))) == {ACTIVE_FILE, "adapted-1"}
