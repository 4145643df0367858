"""`claude-memory llm use NAME | off | offers | status`: which model distils, with consent (#67).

`use` is the consent: it writes CLAUDE_MEMORY_LLM_PROVIDER to the data dir's config.env (the
file server/core/config.py reads; nothing else in it changes) and says in one sentence what
will be sent where. `off` removes that line, so distilling goes back to the local
OpenAI-compatible endpoint (Ollama). `status` says which provider is on, where that came from,
the caps, and the last run's receipt. `offers` names each agent whose CLI is installed and
signed in while none is on, and what `use` would send where (quickstart.sh and `doctor` print
it). Nothing here sends anything anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path
from typing import Any

from server.core.config import (
    Settings,
    config_file_path,
    read_settings,
    variable_name,
)
from server.core.errors import StartupError

SETTING = variable_name("LLM_PROVIDER")


def add_llm_command(commands: Any) -> None:
    """Add `llm` to `commands` (an argparse subparsers object)."""
    llm = commands.add_parser(
        "llm",
        help="let your agent's own model distil your sessions (offers, use NAME, off, status)",
        description="Off until you turn it on: `llm use claude-code` sends the redacted text of "
        "your Claude Code sessions, one request per session and within per-run caps, to "
        "Anthropic's model through your own `claude` login; other agents' sessions never go "
        "to it.",
    )
    actions = llm.add_subparsers(dest="llm_action", required=True)
    use = actions.add_parser("use", help="distil with this agent's CLI (writes config.env)")
    use.add_argument(
        "provider", help="the agent whose model distils (its name, as `connect` takes it)"
    )
    use.set_defaults(run=cmd_llm_use)
    off = actions.add_parser("off", help="stop sending sessions to an agent's model")
    off.set_defaults(run=cmd_llm_off)
    offer = actions.add_parser(
        "offers", help="which installed, signed-in agent CLIs `use` could turn on (sends nothing)"
    )
    offer.set_defaults(run=cmd_llm_offers)
    status = actions.add_parser("status", help="which model distils, the caps, the last receipt")
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    status.set_defaults(run=cmd_llm_status)


def write_provider(path: Path, provider: str | None) -> None:
    """config.env with the provider line set to `provider` (removed for None), other lines
    untouched; written whole to a new file, then moved over the old one, readable by the user
    only."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    kept = [line for line in lines if _setting_of(line) != SETTING]
    if provider is not None:
        kept.append(f"{SETTING}={provider}")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = path.with_name(path.name + ".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write("".join(f"{line}\n" for line in kept))
    os.replace(partial, path)


def _setting_of(line: str) -> str:
    stripped = line.strip()
    if stripped.startswith("export "):
        stripped = stripped[len("export ") :]
    return stripped.partition("=")[0].strip()


def cmd_llm_use(args: argparse.Namespace, settings: Settings) -> int:
    from server.learning.agent_models import consent_sentence, model_name, provider_of
    from server.learning.llm import LlmError

    try:
        provider = provider_of(args.provider)
    except LlmError as exc:
        raise StartupError(str(exc).replace(f"{SETTING}=", "")) from None
    if shutil.which(provider.executable) is None:
        raise StartupError(
            f"{provider.label}'s CLI (`{provider.executable}`) is not on PATH: install it and"
            " log in first, then run this again"
        )
    path = config_file_path(settings.claude_memory_home)
    write_provider(path, provider.name)
    print(consent_sentence(provider.name, model_name(provider.name, settings.llm_model)))  # noqa: T201
    print(f"({SETTING}={provider.name} written to {path})")  # noqa: T201
    _warn_if_overridden(provider.name)
    return 0


def cmd_llm_off(args: argparse.Namespace, settings: Settings) -> int:
    path = config_file_path(settings.claude_memory_home)
    write_provider(path, None)
    print(  # noqa: T201
        f"Nothing is sent to an agent's model any more: distill and behavior use the local"
        f" endpoint ({settings.ollama_url}) again. ({SETTING} removed from {path})"
    )
    _warn_if_overridden(None)
    return 0


def _warn_if_overridden(wanted: str | None) -> None:
    value = os.environ.get(SETTING, "").strip()
    if value and value != (wanted or "openai"):
        print(  # noqa: T201
            f"claude-memory: warning: {SETTING}={value} is set in the environment and wins over"
            " config.env; unset it for this to take effect"
        )


def cmd_llm_offers(args: argparse.Namespace, settings: Settings) -> int:
    """Print what `llm use` could turn on; nothing when an agent's model is on already."""
    from server.learning.agent_models import offers

    for line in offers(settings.llm_provider, os.environ, Path.home()):
        print(line)  # noqa: T201
    return 0


def cmd_llm_status(args: argparse.Namespace, settings: Settings) -> int:
    from server.learning.agent_models import consent_sentence, model_name, models, provider_of

    loaded = read_settings()
    name = loaded.settings.llm_provider
    status: dict[str, Any] = {
        "provider": name,
        "from": loaded.sources.get(SETTING, "default"),
    }
    if name in models():
        provider = provider_of(name)
        model = model_name(name, loaded.settings.llm_model)
        status |= {
            "model": model or "the CLI's default",
            "cli": shutil.which(provider.executable),
            "max_sessions_per_run": loaded.settings.llm_max_sessions_per_run,
            "max_input_tokens_per_run": loaded.settings.llm_max_input_tokens_per_run,
            "sends": consent_sentence(name, model),
        }
    else:
        status |= {
            "model": loaded.settings.distill_model,
            "endpoint": loaded.settings.ollama_url,
            "sends": "Nothing goes to an agent's model: distill and behavior use the"
            f" OpenAI-compatible endpoint at {loaded.settings.ollama_url}.",
        }
    receipts = settings.claude_memory_home / "logs" / "llm-receipts.jsonl"
    lines = receipts.read_text(encoding="utf-8").splitlines() if receipts.is_file() else []
    status["last_receipt"] = json.loads(lines[-1]) if lines else None
    if args.json:
        print(json.dumps(status))  # noqa: T201
        return 0
    for key, value in status.items():
        if value is not None:
            print(f"{key}: {json.dumps(value) if isinstance(value, dict) else value}")  # noqa: T201
    return 0
