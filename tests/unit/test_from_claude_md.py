"""The Claude Code memory reader, against tests/fixtures/other_tools/claude-md."""

from __future__ import annotations

import shutil
from pathlib import Path

from server.core.models.memories import MemoryDraft
from server.domain.promotion import from_instruction_file
from server.ingest.from_claude_md import default_paths, read_claude_md
from server.ingest.tool_reading import ReadContext, ToolReading
from tests.other_tools import CLAUDE_MD

CONFIG = CLAUDE_MD / "home" / ".claude"
ACME_API_MEMORY = CONFIG / "projects" / "-home-dev-work-acme-api" / "memory"
ACME_WEB = CLAUDE_MD / "acme-web"
ACME_CLI = CLAUDE_MD / "acme-cli"


def by_file(reading: ToolReading) -> dict[str, MemoryDraft]:
    """Drafts by file name, `memory/` before the name of an auto-memory file."""
    found = {}
    for record in (r for group in reading.groups for r in group):
        file = Path(record.draft.metadata["original_file"])
        found[f"memory/{file.name}" if file.parent.name == "memory" else file.name] = record.draft
    return found


def drafts_of(reading: ToolReading) -> list[MemoryDraft]:
    return [record.draft for group in reading.groups for record in group]


def test_a_config_folder_gives_user_wide_notes_and_project_memories() -> None:
    reading = read_claude_md([CONFIG], ReadContext())

    assert reading.errors == []
    assert reading.skipped == {"memory_index": 1}  # acme-api's MEMORY.md only links
    drafts = by_file(reading)
    assert sorted(drafts) == [
        "CLAUDE.md",
        "memory/MEMORY.md",  # the scratch project's, written as prose
        "memory/feedback_testing.md",
        "memory/project_release.md",
        "memory/user_role.md",
        "typescript.md",
    ]
    assert drafts["CLAUDE.md"].project == ""
    assert drafts["CLAUDE.md"].kind == "note"
    assert drafts["CLAUDE.md"].tags == ["claude-md"]
    assert drafts["typescript.md"].tags == ["claude-rules"]
    assert {d.source for d in drafts.values()} == {"claude-md"}


def test_feedback_and_user_memories_are_preferences_and_project_ones_notes() -> None:
    drafts = by_file(read_claude_md([ACME_API_MEMORY], ReadContext()))

    feedback = drafts["memory/feedback_testing.md"]
    assert feedback.kind == "preference"
    assert feedback.tags == ["claude-code-memory", "feedback"]
    assert feedback.content.startswith(
        "integration tests hit a real database\n\n"
        "Integration tests must run against the local Postgres, never mocks\n\n"
    )
    assert "**How to apply:**" in feedback.content
    assert feedback.metadata["memory_type"] == "feedback"
    assert feedback.metadata["original_id"] == "feedback_testing"
    assert drafts["memory/user_role.md"].kind == "preference"  # `metadata: type: user`
    assert drafts["memory/project_release.md"].kind == "note"


def test_a_memory_folder_takes_its_project_from_the_sessions_working_directory() -> None:
    drafts = by_file(read_claude_md([ACME_API_MEMORY / "feedback_testing.md"], ReadContext()))

    feedback = drafts["memory/feedback_testing.md"]
    assert (feedback.project, feedback.project_path) == ("acme-api", "/home/dev/work/acme-api")


def test_a_directory_that_already_has_a_name_keeps_it() -> None:
    known = ReadContext(project_names={"/home/dev/work/acme-api": "work/acme-api"})

    drafts = by_file(read_claude_md([ACME_API_MEMORY], known))

    assert {d.project for d in drafts.values()} == {"work/acme-api"}


def test_a_project_folder_gives_its_claude_md_files_under_its_name() -> None:
    reading = read_claude_md([ACME_WEB], ReadContext())

    drafts = [r.draft for group in reading.groups for r in group]
    assert [d.metadata["title"] for d in drafts] == ["acme-web", "acme-web (team notes)"]
    assert {d.project for d in drafts} == {"acme-web"}
    assert {d.project_path for d in drafts} == {str(ACME_WEB.resolve())}


def test_a_repository_gives_every_agents_instruction_file_under_its_name() -> None:
    reading = read_claude_md([ACME_CLI], ReadContext())

    assert reading.errors == []
    drafts = {Path(d.metadata["original_file"]).name: d for d in drafts_of(reading)}
    assert sorted(drafts) == ["AGENTS.md", "GEMINI.md", "copilot-instructions.md"]
    assert {d.project for d in drafts.values()} == {"acme-cli"}
    assert {d.project_path for d in drafts.values()} == {str(ACME_CLI.resolve())}
    assert {d.kind for d in drafts.values()} == {"note"}
    assert {d.source for d in drafts.values()} == {"claude-md"}
    assert drafts["AGENTS.md"].tags == ["agents-md"]
    assert drafts["GEMINI.md"].tags == ["gemini-md"]
    assert drafts["copilot-instructions.md"].tags == ["copilot-instructions"]


def test_promotes_section_is_left_out_and_the_users_text_around_it_kept() -> None:
    agents = next(
        d for d in drafts_of(read_claude_md([ACME_CLI], ReadContext())) if "agents-md" in d.tags
    )

    assert "Run `make test` before every commit" in agents.content
    assert "never with pkg/errors" in agents.content
    assert "golangci-lint" not in agents.content
    assert "claude-memory:promoted" not in agents.content
    assert "memory:41" not in agents.content


def test_copilot_instructions_named_alone_belong_to_the_repository_around_github() -> None:
    file = ACME_CLI / ".github" / "copilot-instructions.md"

    (draft,) = drafts_of(read_claude_md([file], ReadContext()))

    assert (draft.project, draft.project_path) == ("acme-cli", str(ACME_CLI.resolve()))


def test_a_file_holding_only_promotes_section_stores_nothing(tmp_path: Path) -> None:
    section = (ACME_CLI / "AGENTS.md").read_text().split("<!-- claude-memory:promoted:begin")[1]
    (tmp_path / "AGENTS.md").write_text(
        "<!-- claude-memory:promoted:begin" + section.split("## Style")[0]
    )

    reading = read_claude_md([tmp_path], ReadContext())

    assert reading.errors == []
    assert reading.groups == []
    assert reading.skipped == {"only_promoted_section": 1}


def test_broken_markers_name_the_file_and_the_rest_is_read(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n\n<!-- claude-memory:promoted:begin -->\n")
    (tmp_path / "GEMINI.md").write_text("Prefer small commits.\n")

    reading = read_claude_md([tmp_path], ReadContext())

    assert len(reading.errors) == 1
    assert reading.errors[0].startswith(f"{tmp_path / 'AGENTS.md'}: expected one")
    assert (reading.files_read, reading.files_failed) == (1, 1)
    assert [d.content for d in drafts_of(reading)] == ["GEMINI.md\n\nPrefer small commits."]


def test_a_memory_file_with_unclosed_front_matter_is_named_and_the_rest_read(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "projects" / "-home-dev-work-acme-api" / "memory"
    shutil.copytree(ACME_API_MEMORY, memory)
    broken = memory / "feedback_broken.md"
    broken.write_text("---\nname: broken\ntype: feedback\n\nNo closing line.\n")

    reading = read_claude_md([tmp_path], ReadContext())

    assert reading.errors == [f"{broken}: front matter opened with --- is never closed"]
    assert reading.files_failed == 1
    assert len(by_file(reading)) == 3


def test_nothing_to_import_is_said_once(tmp_path: Path) -> None:
    reading = read_claude_md([tmp_path], ReadContext())

    assert reading.errors == [
        f"{tmp_path}: no CLAUDE.md, AGENTS.md, GEMINI.md, copilot-instructions.md, rules"
        " or Claude Code memory files"
    ]
    assert reading.groups == []


def test_by_default_it_reads_claude_config_dir_and_the_current_project(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "work"

    assert default_paths({}, home, cwd) == [home / ".claude", cwd]
    assert default_paths({"CLAUDE_CONFIG_DIR": "/etc/claude"}, home, cwd) == [
        Path("/etc/claude"),
        cwd,
    ]


def test_every_instruction_and_rules_note_is_one_promote_never_proposes_back() -> None:
    # promote (server/domain/promotion.py) must know every note these files give, or a note
    # read from AGENTS.md that the agent used could be written into CLAUDE.md (or itself).
    drafts = drafts_of(read_claude_md([CONFIG, ACME_WEB, ACME_CLI], ReadContext()))
    instruction_notes = [d for d in drafts if "claude-code-memory" not in d.tags]
    assert {t for d in instruction_notes for t in d.tags} >= {"agents-md", "claude-rules"}
    assert all(from_instruction_file(d.source, d.tags) for d in instruction_notes)
    auto_memories = [d for d in drafts if "claude-code-memory" in d.tags]
    assert auto_memories
    assert not any(from_instruction_file(d.source, d.tags) for d in auto_memories)


def test_a_repository_s_instruction_file_linking_out_of_it_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh" / "notes.md"
    secret.parent.mkdir(parents=True)
    secret.write_text("# Mine\n\nThe staging box is reached through bastion-7.\n")
    repo = tmp_path / "cloned"
    (repo / ".claude" / "rules").mkdir(parents=True)
    (repo / "CLAUDE.md").symlink_to(secret)
    (repo / ".claude" / "rules" / "deploy.md").symlink_to(secret)
    (repo / "AGENTS.md").write_text("# Agents\n\nRun make test before a commit.\n")

    reading = read_claude_md([repo], ReadContext())

    assert [d.content for d in drafts_of(reading)] == [
        d.content for d in drafts_of(read_claude_md([repo / "AGENTS.md"], ReadContext()))
    ]
    assert "bastion" not in " ".join(d.content for d in drafts_of(reading))
    assert reading.skipped == {"link_out_of_the_project": 2}
