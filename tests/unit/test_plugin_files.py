"""The Claude Code plugin's files (plugins/memories/), read as Claude Code reads them.

`claude plugin validate` checks plugin.json and hooks.json but not what is inside `.mcp.json`,
so these tests hold both files to what Claude Code documents (FORMATS.md §3: hook events,
handler fields; §4: an http server entry), the hooks to what `install-hooks` writes, the built
files to the package they are made from, and the version to the package's.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from server import __version__
from server.agents.claude_plugin import CLIENT, CLIENT_FILES, PLUGIN, REPOSITORY, stale_files
from server.jobs.hook_install import claude_code_handlers

MARKETPLACE = REPOSITORY / ".claude-plugin" / "marketplace.json"
# FORMATS.md §3.1 and §3.2: the hook events Claude Code documents, a matcher group's fields,
# and the fields of a command handler (common ones first).
DOCUMENTED_EVENTS = {
    "SessionStart", "Setup", "UserPromptSubmit", "UserPromptExpansion", "PreToolUse",
    "PostToolUse", "PostToolUseFailure", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
    "PreCompact", "PostCompact", "SessionEnd", "CwdChanged", "FileChanged", "MessageDisplay",
}  # fmt: skip
GROUP_FIELDS = {"matcher", "hooks"}
COMMAND_FIELDS = {
    "type", "if", "timeout", "statusMessage", "once",
    "command", "args", "async", "asyncRewake", "shell",
}  # fmt: skip
# FORMATS.md §4.1: an http server entry of an MCP configuration.
HTTP_SERVER_FIELDS = {"type", "url", "headers", "timeout"}
USER_CONFIG = re.compile(r"\$\{user_config\.([^}]+)\}")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_marketplace_lists_the_plugin_folder_under_its_own_name() -> None:
    marketplace = read_json(MARKETPLACE)
    [entry] = marketplace["plugins"]
    manifest = read_json(REPOSITORY / entry["source"] / ".claude-plugin" / "plugin.json")

    assert (REPOSITORY / entry["source"]).resolve() == PLUGIN
    assert entry["name"] == manifest["name"] == PLUGIN.name


def test_the_plugin_version_is_the_package_version() -> None:
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]
    manifest = read_json(PLUGIN / ".claude-plugin" / "plugin.json")

    assert manifest["version"] == project["version"] == __version__


def test_the_mcp_server_is_streamable_http_at_the_configured_url_with_the_token() -> None:
    servers = read_json(PLUGIN / ".mcp.json")
    options = read_json(PLUGIN / ".claude-plugin" / "plugin.json")["userConfig"]

    assert set(servers) == {"mcpServers"}
    [(name, server)] = servers["mcpServers"].items()
    assert name == "claude-memory"
    assert set(server) <= HTTP_SERVER_FIELDS
    assert server["type"] == "http"
    # The environment first, then the plugin's option; no address written into the file.
    assert server["url"] == "${CLAUDE_MEMORY_URL:-${user_config.url}}/mcp"
    assert server["headers"] == {
        "Authorization": "Bearer ${CLAUDE_MEMORY_TOKEN:-${user_config.token}}"
    }
    used = set(USER_CONFIG.findall(json.dumps(server)))
    assert used == set(options) == {"url", "token"}
    assert options["token"]["sensitive"] is True


def test_the_hooks_are_the_ones_install_hooks_writes_on_documented_events_and_fields() -> None:
    config = read_json(PLUGIN / "hooks" / "hooks.json")
    installed = {name: handler for name, handler in claude_code_handlers("http://unused")}

    assert set(config) == {"hooks"}
    assert set(config["hooks"]) <= DOCUMENTED_EVENTS
    assert set(config["hooks"]) == set(installed)
    for name, groups in config["hooks"].items():
        [group] = groups
        assert set(group) <= GROUP_FIELDS
        [handler] = group["hooks"]
        assert set(handler) <= COMMAND_FIELDS
        ours = installed[name]
        assert {k: v for k, v in handler.items() if k != "command"} == {
            k: v for k, v in ours.items() if k != "command"
        }
        event = ours["command"].split(" -I -S ")[1].split()[1]
        assert (
            f'python3 -I -S "${{CLAUDE_PLUGIN_ROOT}}/{CLIENT}/server/hooks.py" {event} '
            in (handler["command"])
        )
        assert handler["command"].endswith(" || true")
        assert "${user_config." not in handler["command"]  # refused in a shell command


def test_the_built_files_match_the_package() -> None:
    assert stale_files() == [], "run: python -m server.agents.claude_plugin"


def test_the_shipped_client_is_the_hook_client_and_every_module_it_may_import() -> None:
    """The modules tests/unit/test_architecture.py allows the hook process, and their packages."""
    server = REPOSITORY / "server"
    allowed = [
        server / "hooks.py",
        *(server / "worktree").glob("*.py"),
        server / "core" / "redact.py",
        server / "core" / "readable.py",
        *(server / "agent_facts").glob("*.py"),
    ]
    packages = {path.parent / "__init__.py" for path in allowed}

    assert set(CLIENT_FILES) == {
        path.relative_to(REPOSITORY).as_posix() for path in {*allowed, *packages}
    }


def test_the_shipped_hook_client_imports_only_itself_and_the_standard_library() -> None:
    client = PLUGIN / CLIENT
    code = (
        f"import json, sys; sys.path.append({str(client)!r}); "
        "import server.hooks, server.worktree.context_check, server.core.redact, "
        "server.agent_facts.every; "
        "print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items() if n[:6] == 'server')))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", code],
        capture_output=True, text=True, timeout=30, check=False, cwd=client,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    loaded = [Path(file) for file in json.loads(done.stdout)]
    assert loaded and all(client in file.parents for file in loaded)


def test_the_skill_and_commands_say_when_they_apply() -> None:
    documents = [PLUGIN / "skills" / "memory" / "SKILL.md", *(PLUGIN / "commands").glob("*.md")]

    assert {path.stem for path in (PLUGIN / "commands").glob("*.md")} == {
        "remember", "recall", "why", "forget",
    }  # fmt: skip
    for path in documents:
        text = path.read_text(encoding="utf-8")
        front, _, body = text.removeprefix("---\n").partition("\n---\n")
        fields = dict(line.split(": ", 1) for line in front.splitlines())
        assert fields["description"].strip(), path
        assert body.strip(), path
