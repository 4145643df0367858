"""#65: paths that come from text someone else may have written, followed out of where they
belong, each tried as the attacker would with real files in the test's folder.

- A memory's text names `src/../../../private/deploy.conf`: the working-tree check (the
  server's own in single-user mode, the hook client's on a team's server) must not read a
  file outside the repository, so nothing of it reaches the agent's context.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

import pytest

from server.app import create_app
from server.core.access import acting_as
from server.core.config import Settings
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.git_history import MEMORIES_WRITTEN, acme_repository
from tests.integration.hook_runs import context_of, payload, run_hook

pytestmark = pytest.mark.security

OUTSIDE_NAME = "src/../../../private/deploy.conf"
DEPLOY = f"`DEPLOY_HOST=staging-db` is set in {OUTSIDE_NAME} for every deploy."
PROMPT = f"Which DEPLOY_HOST do our deploys use? It is in {OUTSIDE_NAME}."
PRIVATE_HOST = "db-7.corp-internal.example"


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
