"""Claude Code: its sessions (server/ingest/claude_code.py), `connect` through its own
`claude mcp` commands, its hooks (`install-hooks`, server/jobs/hook_install.py), and what
`doctor` finds connected.

`connect claude-code` runs `claude mcp add --scope user --transport http` with, when the server
needs a token, an `Authorization: Bearer ${CLAUDE_MEMORY_TOKEN}` header that Claude Code
expands when it loads; without `claude` on the PATH it prints the commands to run instead.

With our plugin (plugins/memories/, `memories@claude-memory`) installed and enabled, the plugin
is the connection, its MCP server and its hooks together: connect then removes our user-scope
entry and the hooks `install-hooks` wrote (both backed up) instead of adding a second
connection. Where Claude Code keeps it all (checked against the real CLI, 2.1.331), under
`$CLAUDE_CONFIG_DIR` if set:
- `~/.claude/settings.json`: `enabledPlugins["memories@claude-memory"]` (true when enabled),
  the plugin's options in `pluginConfigs["memories@claude-memory"].options` (`url`), and the
  hooks `install-hooks` wrote;
- `~/.claude/plugins/installed_plugins.json`: `plugins["memories@claude-memory"]`, a list of
  installs with their `installPath` (whose `.claude-plugin/plugin.json` has the URL's default);
- `~/.claude.json`: user-scope MCP entries in `mcpServers`, local-scope ones (one project) in
  `projects[<folder>].mcpServers`; project-scope ones are in the project's `.mcp.json`.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from server.agent_facts import claude_code as about
from server.agents.detect import entry, entry_url, hook_routes, read_json, sends_token
from server.agents.unit import Agent, Found, Problem, Route
from server.ingest.claude_code import CLAUDE_CODE
from server.jobs import hook_install
from server.jobs.agent_files import (
    AgentFileError,
    back_up,
    read_json_object,
    replace_file,
    unified_diff,
)
from server.jobs.connect import (
    BEARER_HEADER,
    SERVER_NAME,
    AgentChange,
    ConnectError,
    Connection,
    FileChange,
    check_before_writing,
    result,
    token_note,
)
from server.jobs.server_check import base_url

NAME = about.NAME
PLUGIN = "memories@claude-memory"  # our plugin, as Claude Code names it (plugin@marketplace)
MARKETPLACE = "claude-memory"  # this repository's marketplace (.claude-plugin/marketplace.json)
URL_VARIABLE = "CLAUDE_MEMORY_URL"  # overrides the plugin's `url` option (plugins/memories/)


def plugin_url(environ: Mapping[str, str], home: Path) -> str | None:
    """The server's URL our plugin calls, if it is installed and enabled; else None.

    CLAUDE_MEMORY_URL, else the plugin's `url` option, else that option's default.
    """
    folder = about.claude_dir(environ, home)
    ignored = Found()
    settings = read_json(folder / "settings.json", ignored)
    enabled = settings.get("enabledPlugins")
    if not isinstance(enabled, dict) or enabled.get(PLUGIN) is not True:
        return None
    listed = read_json(folder / "plugins" / "installed_plugins.json", ignored).get("plugins")
    installs = listed.get(PLUGIN) if isinstance(listed, dict) else None
    if not isinstance(installs, list) or not installs:
        return None
    options = (entry(settings, "pluginConfigs", PLUGIN) or {}).get("options")
    configured = options.get("url") if isinstance(options, dict) else None
    url = environ.get(URL_VARIABLE) or configured or _default_url(installs, ignored)
    return entry_url(url) if isinstance(url, str) else None


def _default_url(installs: list[Any], found: Found) -> str | None:
    """The `url` option's default, from the installed plugin's own plugin.json."""
    for install in installs:
        path = install.get("installPath") if isinstance(install, dict) else None
        if isinstance(path, str):
            manifest = read_json(Path(path) / ".claude-plugin" / "plugin.json", found)
            option = entry(manifest, "userConfig", "url") or {}
            if isinstance(option.get("default"), str):
                return str(option["default"])
    return None


def connect(request: Connection) -> AgentChange:
    notes = [token_note("claude")] if request.use_token else []
    if request.instructions:
        notes.append("--instructions is for agents without hooks; Claude Code has hooks")
    through_plugin = plugin_url(request.environ, request.home)
    if through_plugin is not None:
        return _leave_it_to_the_plugin(request, through_plugin)
    change = _through_claude(request, "connect", notes)
    if request.hooks and request.url is not None:
        change = _with_hooks(change, _install_hooks(request, base_url(request.url)))
    change.notes.append(
        "the plugin adds the skill and the /memories: commands too, as one connection: "
        f"claude plugin marketplace add {_checkout()} && claude plugin install {PLUGIN}"
    )
    return change


def _leave_it_to_the_plugin(request: Connection, url: str) -> AgentChange:
    """The plugin connects Claude Code: remove our user-scope entry and install-hooks hooks."""
    entry_removed = _through_claude(replace(request, url=None), "disconnect", [])
    settings = hook_install.settings_path(request.environ, request.home)
    try:
        hooks = hook_install.uninstall(
            settings, now=request.now, backups=request.backups, dry_run=request.dry_run
        )
    except hook_install.HookSettingsError as exc:
        raise ConnectError(str(exc)) from None
    removed = [
        what
        for what, changed in (
            ("our user-scope MCP entry", entry_removed.changed),
            ("the hooks install-hooks wrote", hooks.changed),
        )
        if changed
    ]
    verb = "would remove" if request.dry_run else "removed"
    said = f"Claude Code is connected by the plugin {PLUGIN} ({url})"
    notes = [f"{said}: {verb} {' and '.join(removed)} instead of adding a second connection"]
    if not removed:
        notes = [f"{said}; nothing else to do"]
    asked = entry_url(request.url)
    if asked is not None and asked != url:
        notes.append(
            f"the plugin calls {url}, not {asked}: change its url option (/plugin configure "
            f"{PLUGIN} in Claude Code) or set {URL_VARIABLE}"
        )
    files = [*entry_removed.files]
    if hooks.changed:
        files.append(FileChange(hooks.settings, True, hooks.backup, hooks.diff))
    return AgentChange(
        agent=NAME,
        action="connect",
        changed=bool(removed),
        dry_run=request.dry_run,
        url=None,
        transport=None,
        files=files,
        commands=entry_removed.commands,
        notes=notes,
    )


def disconnect(request: Connection) -> AgentChange:
    """Remove every way we connected Claude Code: the plugin, our MCP entry, install-hooks'."""
    plugin_commands = _plugin_removal(request)
    change = _through_claude(request, "disconnect", [], first=plugin_commands)
    if plugin_commands and not request.dry_run:
        _drop_emptied_plugin_keys(hook_install.settings_path(request.environ, request.home))
    return _with_hooks(change, _uninstall_hooks(request))


def _plugin_removal(request: Connection) -> list[list[str]]:
    """`claude plugin` commands removing our plugin and its marketplace, where installed."""
    folder = about.claude_dir(request.environ, request.home)
    ignored = Found()
    listed = read_json(folder / "plugins" / "installed_plugins.json", ignored).get("plugins")
    known = read_json(folder / "plugins" / "known_marketplaces.json", ignored)
    commands = []
    if isinstance(listed, dict) and PLUGIN in listed:
        commands.append(["claude", "plugin", "uninstall", PLUGIN])
    if MARKETPLACE in known:
        commands.append(["claude", "plugin", "marketplace", "remove", MARKETPLACE])
    return commands


# What `claude plugin uninstall` and `marketplace remove` leave behind as empty objects.
_PLUGIN_KEYS = ("enabledPlugins", "extraKnownMarketplaces", "pluginConfigs")


def _drop_emptied_plugin_keys(settings: Path) -> None:
    """Take out the empty plugin objects Claude Code leaves in settings.json once our plugin
    and marketplace are removed, so the user's settings read as they did before the install."""
    try:
        _, data = hook_install.read_settings(settings)
    except hook_install.HookSettingsError:
        return
    kept = {key: value for key, value in data.items() if key not in _PLUGIN_KEYS or value}
    if kept != data:
        replace_file(settings, hook_install.render(kept))


def _install_hooks(request: Connection, url: str) -> hook_install.HookChange:
    settings = hook_install.settings_path(request.environ, request.home)
    try:
        return hook_install.install(
            settings,
            url,
            now=request.now,
            backups=request.backups,
            dry_run=request.dry_run,
            python=request.python,
        )
    except hook_install.HookSettingsError as exc:
        raise ConnectError(str(exc)) from None


def _uninstall_hooks(request: Connection) -> hook_install.HookChange:
    settings = hook_install.settings_path(request.environ, request.home)
    try:
        return hook_install.uninstall(
            settings, now=request.now, backups=request.backups, dry_run=request.dry_run
        )
    except hook_install.HookSettingsError as exc:
        raise ConnectError(str(exc)) from None


def _with_hooks(change: AgentChange, hooks: hook_install.HookChange) -> AgentChange:
    """`change` with what was done to the hooks install-hooks writes in settings.json."""
    if not hooks.changed:
        return change
    file = FileChange(hooks.settings, True, hooks.backup, hooks.diff)
    return replace(change, changed=True, files=[*change.files, file], hooks=hooks.events)


def _checkout() -> str:
    """This checkout's folder when the server runs from one (it holds our marketplace)."""
    root = Path(__file__).resolve().parents[2]
    marketplace = root / ".claude-plugin" / "marketplace.json"
    return str(root) if marketplace.is_file() else "/path/to/claude-memory"


def _through_claude(
    request: Connection,
    action: Literal["connect", "disconnect"],
    notes: list[str],
    first: list[list[str]] | None = None,
) -> AgentChange:
    """Claude Code's user scope, through its own `claude mcp` commands (after `first`, other
    `claude` commands to run in the same way)."""
    config = about.claude_config_file(request.environ, request.home)
    try:
        _, data = read_json_object(config, "Claude Code could not read it either.")
    except AgentFileError as exc:
        raise ConnectError(str(exc)) from None
    servers = data.get("mcpServers")
    current = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    url = request.url if action == "connect" else None
    wanted: dict[str, Any] | None = None
    if url is not None:
        wanted = {"type": "http", "url": url}
        if request.use_token:
            wanted["headers"] = {"Authorization": BEARER_HEADER}
    commands = list(first or [])
    if current == wanted and not commands:
        return result(NAME, action, request, [], [], notes)
    check_before_writing(replace(request, url=url))
    if current is not None and current != wanted:
        commands.append(["claude", "mcp", "remove", SERVER_NAME, "--scope", "user"])
    if url is not None and current != wanted:
        add = ["claude", "mcp", "add", "--scope", "user", "--transport", "http", SERVER_NAME, url]
        # After the URL: --header takes several values and would swallow the name and URL.
        commands.append(
            add + (["--header", f"Authorization: {BEARER_HEADER}"] if request.use_token else [])
        )
    entry_diff = unified_diff(
        Path(f"{config} mcpServers.{SERVER_NAME}"), _entry_text(current), _entry_text(wanted)
    )
    claude = shutil.which("claude", path=request.environ.get("PATH"))
    if request.dry_run:
        if claude is None:
            notes.append("the `claude` command is not on PATH: run these commands yourself")
        file = FileChange(config, current != wanted, None, entry_diff)
        return result(NAME, action, request, [file], commands, notes)
    if claude is None:
        raise ConnectError(
            "the `claude` command is not on PATH; run: "
            + " && ".join(shlex.join(command) for command in commands)
        )
    try:
        backup = back_up(config, request.now, request.backups) if current != wanted else None
    except AgentFileError as exc:
        raise ConnectError(str(exc)) from None
    for command in commands:
        completed = subprocess.run(
            [claude, *command[1:]],
            env=dict(request.environ),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if completed.returncode != 0:
            output = (completed.stderr or completed.stdout).strip().splitlines()
            raise ConnectError(
                f"`{shlex.join(command)}` failed: {output[-1] if output else 'no output'}"
                + (f" (backup of {config}: {backup})" if backup else "")
            )
    file = FileChange(config, current != wanted, backup, entry_diff)
    return result(NAME, action, request, [file], commands, notes)


def detect(environ: Mapping[str, str], home: Path, cwd: Path) -> Found:
    """The plugin, our MCP entries at each scope, and install-hooks' hooks; what clashes."""
    found = Found()
    settings_file = hook_install.settings_path(environ, home)
    settings = read_json(settings_file, found)
    through_plugin = plugin_url(environ, home)
    if through_plugin is not None:
        found.routes.extend(
            Route(f"plugin {PLUGIN}", role, settings_file, through_plugin, _PLUGIN_FIX)
            for role in ("mcp", "hooks")
        )
    elif PLUGIN in (settings.get("enabledPlugins") or {}):
        found.notes.append(f"the plugin {PLUGIN} is disabled: claude plugin enable {PLUGIN}")
    config = about.claude_config_file(environ, home)
    data = read_json(config, found)
    project = entry(data, "projects", str(cwd)) or {}
    shared = cwd / ".mcp.json"
    entries = (
        ("user-scope MCP entry", config, entry(data, "mcpServers", SERVER_NAME), "user"),
        ("local-scope MCP entry", config, entry(project, "mcpServers", SERVER_NAME), "local"),
        (
            "project MCP entry",
            shared,
            entry(read_json(shared, found), "mcpServers", SERVER_NAME),
            "project",
        ),
    )
    for path, source, value, scope in entries:
        if value is None:
            continue
        add = f"claude mcp add --scope {scope} --transport http {SERVER_NAME} {{url}}/mcp"
        fix = (
            f"claude-memory connect {NAME} --url {{url}}"
            if scope == "user"
            else f"claude mcp remove {SERVER_NAME} --scope {scope} && {add}"
        )
        url = entry_url(value.get("url"))
        found.routes.append(
            Route(path, "mcp", source, url, fix, sends_token(value), scope == "project")
        )
        if through_plugin is not None:
            found.problems.append(_second_connection(path, source, scope))
    hooks = hook_routes(
        "install-hooks hooks", settings_file, settings, "claude-memory install-hooks --url {url}"
    )
    found.routes.extend(hooks)
    if through_plugin is not None and hooks:
        found.problems.append(
            Problem(
                f"our hooks are in {settings_file} (install-hooks) and in the plugin: Claude "
                "Code runs each of them twice",
                f"claude-memory connect {NAME}",
            )
        )
    return found


_PLUGIN_FIX = (
    f"/plugin configure {PLUGIN} in Claude Code (url: {{url}}), or export {URL_VARIABLE}={{url}}"
)


def _second_connection(path: str, source: Path, scope: str) -> Problem:
    """A `claude-memory` entry of ours next to the plugin's server of the same name."""
    message = (
        f"a {path} ({source}) next to the plugin: two connections to one server, or the "
        "entry hides the plugin's"
    )
    if scope == "user":
        return Problem(message, f"claude-memory connect {NAME}")
    return Problem(message, f"claude mcp remove {SERVER_NAME} --scope {scope}")


def _entry_text(entry: dict[str, Any] | None) -> str:
    return "" if entry is None else json.dumps(entry, indent=2) + "\n"


AGENT = Agent(
    about=about,
    format=CLAUDE_CODE,
    connect=connect,
    disconnect=disconnect,
    connect_example="run `claude mcp add --scope user --transport http`; with our plugin "
    "installed, remove that entry and install-hooks' hooks instead",
    detect=detect,
)
