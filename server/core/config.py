"""One `Settings` object, read once from the environment, then the config file, then defaults.

Only `CLAUDE_MEMORY_*` variables are read, and the config file is
`$CLAUDE_MEMORY_HOME/config.env`, never a `.env` in the current folder: the process starts in
whatever project the agent has open, and that project's `.env` or its shell's `DATABASE_URL`,
`HOST` or `PORT` are not ours (#54).

Nothing else in the package reads `os.environ`: commands call `load_settings()` and pass the
result down, and tests build `Settings(...)` directly. Every variable here is listed, with its
default, in the README's configuration table.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from server.core.access import VISIBILITIES
from server.core.errors import ConfigError
from server.core.models.memories import MEMORY_KINDS
from server.core.ranking import RankingPrior, parse_kind_weights

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
# Raw transcript turns and chunks of imported notes rank a little below what was distilled or
# saved on purpose (a note chunk is raw material too: at 1.0, a handbook written in March
# outranked the April session that changed its values: outside corpus current answered@1
# 0.562 -> 0.656, stale@1 0.188 -> 0.094 at 0.9; docs/benchmarks-history.md, session 20), and a
# trajectory (how a task got done) above the facts about the same task: asked for again, the
# way that worked should come first. Under score fusion (session 13) the gaps between hits
# count, so the trajectory needs more than rank fusion's 1.15: on the acme case (a trajectory
# and the root-cause fact of the same bug) the fact led by a factor of 1.08 after 1.15, so
# 1.3 (1.25 is the least that puts the trajectory first there).
DEFAULT_KIND_WEIGHTS = "raw=0.9,note=0.9,trajectory=1.3"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class Secret:
    """A string that never shows itself in reprs, logs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    def __str__(self) -> str:
        return "**********"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def default_home() -> Path:
    """The per-user data dir; as root, /var/lib/claude-memory.

    Postgres refuses to run as root, so the embedded server runs as a separate system user that
    must be able to reach its data dir: root's home directory is closed to it.
    """
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/var/lib/claude-memory")
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "share"
    return base / "claude-memory"


def data_home(environ: Mapping[str, str]) -> Path:
    """The data dir `environ` names (CLAUDE_MEMORY_HOME), else `default_home()`."""
    raw = environ.get("CLAUDE_MEMORY_HOME", "")
    return Path(raw.strip()).expanduser() if raw.strip() else default_home()


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the process can be configured with. Field names match the variables."""

    database_url: Secret | None = None
    claude_memory_home: Path = field(default_factory=default_home)
    host: str = "127.0.0.1"
    port: int = 3333
    # Names besides loopback and the bound address that requests may be addressed to (Host and
    # Origin), for a server reached as `mybox.lan` or as a compose service name.
    allowed_hosts: tuple[str, ...] = ()
    # A request's body must be in this many seconds after its headers, or the connection is
    # closed (server/adapters/header_deadline.py): a trickled body holds no connection for long.
    request_body_deadline_seconds: float = 30.0
    claude_memory_token: Secret | None = None
    # What a user's save is when it does not say (only with users: `claude-memory users add`).
    default_visibility: str = "private"
    embedding_provider: str = "local"  # or "openai": any OpenAI-compatible /v1/embeddings
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    embedding_base_url: str = ""  # empty: CLAUDE_MEMORY_OLLAMA_URL
    embedding_api_key: Secret | None = None
    embedding_batch_size: int = 64
    embedding_timeout_seconds: float = 60.0
    embedding_query_prefix: str | None = None  # None: the model's profile
    embedding_document_prefix: str | None = None
    guard_noop_threshold: float = 0.92
    guard_update_threshold: float = 0.75
    cache_max_size: int = 500
    cache_ttl_seconds: float = 600.0
    db_pool_min_size: int = 1
    db_pool_max_size: int = 5
    db_statement_timeout_ms: int = 30_000
    db_transaction_pooling: bool = False  # behind PgBouncer's pool_mode = transaction
    max_content_chars: int = 100_000
    search_kind_weights: str = DEFAULT_KIND_WEIGHTS
    search_recency_weight: float = 0.1
    search_recency_half_life_days: float = 90.0
    search_question_weight: float = 0.85  # a conversation turn that ends in a question
    # More lines for the developer vocabulary (server/domain/vocabulary.txt's format).
    search_vocabulary_file: Path | None = None
    recall_threshold: float | None = (
        None  # None: measured for the model (server/service/cutoffs.py)
    )
    recall_max_hits: int = 3
    # 2,200 characters: about 550 tokens, the most a prompt's text may cost at p95 (#67), hits
    # in full and the index beneath them together (CONTEXT_PROMPT_TOKENS, 600, is the ceiling
    # the session's receipts count).
    recall_max_chars: int = 2_200
    # A long memory that does not fit its share of the prompt budget is shown as the statements
    # that name the prompt's words (with its id and date, so the agent can fetch the rest),
    # rather than one run of its text cut at the share (#55; docs/benchmarks-history.md,
    # session 34: as many answers for fewer tokens on every corpus measured).
    recall_statements: bool = True
    # With recall_statements, up to this many hits in all: those past RECALL_MAX_HITS (each
    # passing the same cut-off) share the room the first ones' statements saved, so the text is
    # never longer than the first hits alone would have made it (#55).
    # 0: RECALL_MAX_HITS only.
    recall_room_hits: int = 5
    # Beneath the hits that pass the cut-off, up to this many next candidates, one line each,
    # for the agent to open if they bear on the task (#67); 0: none.
    recall_index_lines: int = 5
    # Prompt recall learns from whether the agent used what it was given (#38): a memory
    # injected and never used sinks, one used often rises; verdicts count half after this many
    # days. Off: recall ranks as search does.
    recall_learns_from_use: bool = True
    recall_use_half_life_days: float = 30.0
    # Receipts of what the hooks inject (#38), kept this many days; 0 records none.
    receipts_retention_days: int = 90
    # What the hooks may inject (#38), in estimated tokens (four characters each): at session
    # start, per prompt, and in all of one session (start, prompts and lessons together;
    # counted from its receipts, so with receipts off only the first two hold).
    context_start_tokens: int = 2_000
    context_prompt_tokens: int = 600
    context_session_tokens: int = 12_000
    # `claude-memory promote` (#58): a memory earns a line in the repository's instruction
    # files after this many injections the agent used with no correction since; decisions,
    # conventions and preferences the user stated need none when PROMOTE_STATED is on. The
    # section holds at most PROMOTE_MAX_LINES lines and PROMOTE_MAX_TOKENS estimated tokens.
    promote_min_uses: int = 3
    promote_stated: bool = True
    promote_max_lines: int = 30
    promote_max_tokens: int = 1_500
    # A reranker reorders the fused top candidates of hybrid search (server/service/rerank.py):
    # none, cross-encoder (a sentence-transformers CrossEncoder on disk: RERANK_MODEL), http (a
    # /rerank endpoint: RERANK_URL) or llm (the configured LLM, OLLAMA_URL; RERANK_MODEL or
    # DISTILL_MODEL). On the hooks only when RERANK_HOOKS is on, within its own time limit;
    # with RERANK_HOOK_MIN_SCORE set, the reranker's score, not the bundled model's
    # similarity, decides which of the hook's candidates count (server/recall/cutoff.py).
    rerank_provider: str = "none"
    rerank_model: str = ""
    rerank_url: str = ""
    rerank_api_key: Secret | None = None
    rerank_depth: int = 20
    rerank_timeout_seconds: float = 10.0
    rerank_hooks: bool = False
    rerank_hook_timeout_seconds: float = 0.5
    rerank_hook_min_score: float | None = None
    ollama_url: str = "http://localhost:11434/v1"
    llm_api_key: Secret | None = None
    distill_model: str = "qwen2.5:7b"
    distill_workers: int = 4
    distill_min_messages: int = 5
    distill_context_tokens: int = 16_000
    llm_timeout_seconds: float = 300.0
    # Who distils (#67): `openai` (the endpoint above: Ollama or any OpenAI-compatible one) or
    # an agent's own CLI in its headless mode with the user's login (`claude-code`, `codex`,
    # `gemini`, `copilot`). An agent's CLI is the user's say-so: `claude-memory llm use NAME`
    # writes it to config.env. Its model: LLM_MODEL, else the CLI's small default
    # (server/learning/agent_models.py). Per run at most LLM_MAX_SESSIONS_PER_RUN sessions and
    # LLM_MAX_INPUT_TOKENS_PER_RUN estimated prompt tokens go to an agent's model.
    llm_provider: str = "openai"
    llm_model: str = ""
    llm_max_sessions_per_run: int = 20
    llm_max_input_tokens_per_run: int = 200_000
    log_level: str = "INFO"

    @property
    def embedded_pgdata(self) -> Path:
        return self.claude_memory_home / "pg"

    @property
    def embeddings_url(self) -> str:
        """Where the `openai` provider sends texts: the embedding base URL, else the Ollama URL."""
        return self.embedding_base_url or self.ollama_url

    @property
    def uses_embedded_database(self) -> bool:
        return self.database_url is None

    @property
    def ranking_prior(self) -> RankingPrior:
        return RankingPrior(
            kind_weights=parse_kind_weights(self.search_kind_weights),
            recency_weight=self.search_recency_weight,
            half_life_days=self.search_recency_half_life_days,
            question_weight=self.search_question_weight,
        )


def _parse_int(name: str, raw: str, low: int, high: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _parse_float(name: str, raw: str, low: float, high: float) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _parse_log_level(name: str, raw: str) -> str:
    level = raw.strip().upper()
    if level not in LOG_LEVELS:
        raise ConfigError(f"{name} must be one of {', '.join(LOG_LEVELS)}, got {raw!r}")
    return level


def _parse_kind_weights(name: str, raw: str) -> str:
    try:
        weights = parse_kind_weights(raw)
    except ValueError as exc:
        raise ConfigError(f"{name}: {exc}") from None
    unknown = sorted(set(weights) - set(MEMORY_KINDS))
    if unknown:
        raise ConfigError(
            f"{name}: unknown kind {unknown[0]!r}; kinds are {', '.join(MEMORY_KINDS)}"
        )
    return raw


def _parse_token(name: str, raw: str) -> str:
    token = raw.strip()
    if len(token) < 16 or any(c.isspace() for c in token):
        raise ConfigError(f"{name} must be at least 16 characters with no spaces")
    return token


def _parse_url(name: str, raw: str) -> str:
    url = raw.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"{name} must be an http:// or https:// URL, got {raw!r}")
    return url


_HOST_NAME = re.compile(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?|[0-9a-f:]+")


def _parse_host_names(name: str, raw: str) -> tuple[str, ...]:
    """Comma-separated host names or IP addresses, without ports or schemes."""
    names = tuple(part.strip().lower().strip("[]") for part in raw.split(",") if part.strip())
    for host in names:
        if not _HOST_NAME.fullmatch(host):
            raise ConfigError(
                f"{name} must list host names or IP addresses separated by commas (no port, "
                f"no scheme), got {host!r}"
            )
        if host in ("0.0.0.0", "::", "*"):
            raise ConfigError(f"{name} cannot allow every address ({host!r})")
    return names


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _parse_bool(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value not in _TRUE + _FALSE:
        raise ConfigError(f"{name} must be true or false, got {raw!r}")
    return value in _TRUE


EMBEDDING_PROVIDERS = ("local", "openai")
RERANK_PROVIDERS = ("none", "cross-encoder", "http", "llm")


def _parse_visibility(name: str, raw: str) -> str:
    value = raw.strip().lower()
    if value not in VISIBILITIES:
        raise ConfigError(f"{name} must be private or shared, got {raw!r}")
    return value


def _parse_provider(name: str, raw: str) -> str:
    provider = raw.strip().lower()
    if provider not in EMBEDDING_PROVIDERS:
        raise ConfigError(f"{name} must be one of {', '.join(EMBEDDING_PROVIDERS)}, got {raw!r}")
    return provider


def _parse_llm_provider(name: str, raw: str) -> str:
    """`openai` or an agent's name; which agents can distil, the job checks
    (server/learning/agent_models.py), so this module names no agent."""
    provider = raw.strip().lower()
    if not re.fullmatch(r"[a-z][a-z0-9-]*", provider):
        raise ConfigError(f"{name} must be openai or an agent's name, got {raw!r}")
    return provider


def _parse_rerank_provider(name: str, raw: str) -> str:
    provider = raw.strip().lower()
    if provider not in RERANK_PROVIDERS:
        raise ConfigError(f"{name} must be one of {', '.join(RERANK_PROVIDERS)}, got {raw!r}")
    return provider


def _parse_prefix(name: str, raw: str) -> str:
    """A prefix as written, trailing space included; `none` means no prefix at all."""
    return "" if raw.strip().lower() == "none" else raw


def _parse_nonempty(name: str, raw: str) -> str:
    if not raw.strip():
        raise ConfigError(f"{name} must not be empty")
    return raw.strip()


def _parse_vocabulary_file(name: str, raw: str) -> Path:
    """An existing file; the service reads its lines at start (server/domain/vocabulary.py)."""
    path = Path(_parse_nonempty(name, raw)).expanduser()
    if not path.is_file():
        raise ConfigError(f"{name}: no such file: {path}")
    return path


_PARSERS: dict[str, Callable[[str, str], Any]] = {
    "DATABASE_URL": lambda n, r: Secret(_parse_nonempty(n, r)),
    "CLAUDE_MEMORY_HOME": lambda n, r: Path(_parse_nonempty(n, r)).expanduser(),
    "HOST": _parse_nonempty,
    "PORT": lambda n, r: _parse_int(n, r, 1, 65535),
    "ALLOWED_HOSTS": _parse_host_names,
    "CLAUDE_MEMORY_TOKEN": lambda n, r: Secret(_parse_token(n, r)),
    "DEFAULT_VISIBILITY": _parse_visibility,
    "REQUEST_BODY_DEADLINE_SECONDS": lambda n, r: _parse_float(n, r, 1.0, 3_600.0),
    "EMBEDDING_PROVIDER": _parse_provider,
    "EMBEDDING_MODEL": _parse_nonempty,
    "EMBEDDING_BASE_URL": lambda n, r: _parse_url(n, r),
    "EMBEDDING_API_KEY": lambda n, r: Secret(_parse_nonempty(n, r)),
    "EMBEDDING_BATCH_SIZE": lambda n, r: _parse_int(n, r, 1, 4096),
    "EMBEDDING_TIMEOUT_SECONDS": lambda n, r: _parse_float(n, r, 1.0, 3_600.0),
    "EMBEDDING_QUERY_PREFIX": _parse_prefix,
    "EMBEDDING_DOCUMENT_PREFIX": _parse_prefix,
    "GUARD_NOOP_THRESHOLD": lambda n, r: _parse_float(n, r, 0.0, 1.0),
    "GUARD_UPDATE_THRESHOLD": lambda n, r: _parse_float(n, r, 0.0, 1.0),
    "CACHE_MAX_SIZE": lambda n, r: _parse_int(n, r, 0, 1_000_000),
    "CACHE_TTL_SECONDS": lambda n, r: _parse_float(n, r, 0.0, 86_400.0),
    "DB_POOL_MIN_SIZE": lambda n, r: _parse_int(n, r, 1, 100),
    "DB_POOL_MAX_SIZE": lambda n, r: _parse_int(n, r, 1, 100),
    "DB_STATEMENT_TIMEOUT_MS": lambda n, r: _parse_int(n, r, 0, 86_400_000),
    "DB_TRANSACTION_POOLING": lambda n, r: _parse_bool(n, r),
    "MAX_CONTENT_CHARS": lambda n, r: _parse_int(n, r, 1, 10_000_000),
    "SEARCH_KIND_WEIGHTS": lambda n, r: _parse_kind_weights(n, r),
    "SEARCH_RECENCY_WEIGHT": lambda n, r: _parse_float(n, r, 0.0, 1.0),
    "SEARCH_RECENCY_HALF_LIFE_DAYS": lambda n, r: _parse_float(n, r, 0.0, 36_500.0),
    "SEARCH_QUESTION_WEIGHT": lambda n, r: _parse_float(n, r, 0.0, 1.0),
    "SEARCH_VOCABULARY_FILE": lambda n, r: _parse_vocabulary_file(n, r),
    "RECALL_THRESHOLD": lambda n, r: _parse_float(n, r, 0.0, 1.0),
    "RECALL_MAX_HITS": lambda n, r: _parse_int(n, r, 1, 20),
    "RECALL_MAX_CHARS": lambda n, r: _parse_int(n, r, 500, 9_000),
    "RECALL_LEARNS_FROM_USE": lambda n, r: _parse_bool(n, r),
    "RECALL_STATEMENTS": lambda n, r: _parse_bool(n, r),
    "RECALL_ROOM_HITS": lambda n, r: _parse_int(n, r, 0, 20),
    "RECALL_INDEX_LINES": lambda n, r: _parse_int(n, r, 0, 20),
    "RECALL_USE_HALF_LIFE_DAYS": lambda n, r: _parse_float(n, r, 1.0, 3_650.0),
    "RECEIPTS_RETENTION_DAYS": lambda n, r: _parse_int(n, r, 0, 3_650),
    "CONTEXT_START_TOKENS": lambda n, r: _parse_int(n, r, 0, 100_000),
    "CONTEXT_PROMPT_TOKENS": lambda n, r: _parse_int(n, r, 0, 100_000),
    "CONTEXT_SESSION_TOKENS": lambda n, r: _parse_int(n, r, 0, 10_000_000),
    "PROMOTE_MIN_USES": lambda n, r: _parse_int(n, r, 1, 10_000),
    "PROMOTE_STATED": lambda n, r: _parse_bool(n, r),
    "PROMOTE_MAX_LINES": lambda n, r: _parse_int(n, r, 1, 1_000),
    "PROMOTE_MAX_TOKENS": lambda n, r: _parse_int(n, r, 10, 1_000_000),
    "RERANK_PROVIDER": _parse_rerank_provider,
    "RERANK_MODEL": _parse_nonempty,
    "RERANK_URL": lambda n, r: _parse_url(n, r),
    "RERANK_API_KEY": lambda n, r: Secret(_parse_nonempty(n, r)),
    "RERANK_DEPTH": lambda n, r: _parse_int(n, r, 2, 100),
    "RERANK_TIMEOUT_SECONDS": lambda n, r: _parse_float(n, r, 0.1, 600.0),
    "RERANK_HOOKS": lambda n, r: _parse_bool(n, r),
    "RERANK_HOOK_TIMEOUT_SECONDS": lambda n, r: _parse_float(n, r, 0.05, 10.0),
    "RERANK_HOOK_MIN_SCORE": lambda n, r: _parse_float(n, r, -1_000.0, 1_000.0),
    "OLLAMA_URL": lambda n, r: _parse_url(n, r),
    "LLM_API_KEY": lambda n, r: Secret(_parse_nonempty(n, r)),
    "DISTILL_MODEL": _parse_nonempty,
    "DISTILL_WORKERS": lambda n, r: _parse_int(n, r, 1, 64),
    "DISTILL_MIN_MESSAGES": lambda n, r: _parse_int(n, r, 1, 10_000),
    "DISTILL_CONTEXT_TOKENS": lambda n, r: _parse_int(n, r, 2_000, 2_000_000),
    "LLM_TIMEOUT_SECONDS": lambda n, r: _parse_float(n, r, 1.0, 3_600.0),
    "LLM_PROVIDER": _parse_llm_provider,
    "LLM_MODEL": _parse_nonempty,
    "LLM_MAX_SESSIONS_PER_RUN": lambda n, r: _parse_int(n, r, 1, 100_000),
    "LLM_MAX_INPUT_TOKENS_PER_RUN": lambda n, r: _parse_int(n, r, 1_000, 1_000_000_000),
    "LOG_LEVEL": _parse_log_level,
}


CONFIG_FILE_NAME = "config.env"
_PREFIX = "CLAUDE_MEMORY_"


def variable_name(key: str) -> str:
    """The variable a setting is read from: `PORT` -> `CLAUDE_MEMORY_PORT`.

    Only prefixed names are read, so a `DATABASE_URL`, `HOST` or `PORT` that a shell or an
    application sets for itself never reaches claude-memory (issue #54).
    """
    return key if key.startswith(_PREFIX) else _PREFIX + key


def config_file_path(home: Path) -> Path:
    """The config file in the data directory; never a file in the current folder."""
    return home / CONFIG_FILE_NAME


def read_env_file(path: Path) -> dict[str, tuple[str, int]]:
    """Parse KEY=value lines (`#` comments, optional quotes, optional `export`): value, line."""
    values: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("export "):
            stripped = stripped[len("export ") :].lstrip()
        key, sep, value = stripped.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{path}:{number}: expected KEY=value")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = (value, number)
    return values


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    """Settings with where each non-default value came from, and what was ignored."""

    settings: Settings
    # variable name -> "environment" or "<config file>:<line>", for every value that was set
    sources: dict[str, str]
    # one line per old unprefixed variable that is set but no longer read
    warnings: tuple[str, ...]


def read_settings(
    environ: Mapping[str, str] | None = None, config_file: Path | str | None = "home"
) -> LoadedSettings:
    """Build Settings from `environ` (default: the process environment), then the config file.

    Only `CLAUDE_MEMORY_*` names are read. The config file is `$CLAUDE_MEMORY_HOME/config.env`
    (`config_file="home"`), a given path, or none; a `.env` in the current folder is never
    read. An empty variable counts as unset, so `CLAUDE_MEMORY_DATABASE_URL=` means "embedded".
    Raises ConfigError with one line naming the variable when a value is unusable.
    """
    env = dict(os.environ if environ is None else environ)
    if config_file == "home":
        config_file = config_file_path(data_home(env))
    path = Path(config_file) if config_file is not None else None
    file_values = read_env_file(path) if path is not None and path.is_file() else {}
    names = {variable_name(key): key for key in _PARSERS}
    for name, (_, number) in file_values.items():
        if name == "CLAUDE_MEMORY_HOME":
            raise ConfigError(f"{path}:{number}: set CLAUDE_MEMORY_HOME in the environment")
        if name not in names:
            hint = f"; the name is now {variable_name(name)}" if name in _PARSERS else ""
            raise ConfigError(f"{path}:{number}: unknown setting {name}{hint}")
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    warnings: list[str] = []
    for name, key in names.items():
        raw = env.get(name)
        source = "environment"
        if raw is None or raw == "":
            raw, number = file_values.get(name, (None, 0))
            source = f"{path}:{number}"
        if name != key and env.get(key) and not env.get(name):
            warnings.append(f"{key} is set but not read: claude-memory reads {name}")
        if raw is None or raw == "":
            continue
        values[key.lower()] = _PARSERS[key](name, raw)
        sources[name] = source
    settings = Settings(**values)
    _check_consistency(settings)
    return LoadedSettings(settings, sources, tuple(warnings))


def load_settings(
    environ: Mapping[str, str] | None = None, config_file: Path | str | None = "home"
) -> Settings:
    """The Settings of `read_settings`, without where they came from."""
    return read_settings(environ, config_file).settings


def describe_settings(loaded: LoadedSettings) -> list[tuple[str, str, str]]:
    """(variable, value, source) for every setting, in table order; secrets masked."""
    rows = []
    for f in fields(Settings):
        name = variable_name(f.name.upper())
        value = getattr(loaded.settings, f.name)
        if isinstance(value, tuple):
            shown = ",".join(value)
        elif value is None:
            shown = ""
        else:
            shown = str(value)  # a Secret prints as asterisks
        rows.append((name, shown, loaded.sources.get(name, "default")))
    return rows


def _check_consistency(settings: Settings) -> None:
    if settings.guard_update_threshold > settings.guard_noop_threshold:
        raise ConfigError(
            "CLAUDE_MEMORY_GUARD_UPDATE_THRESHOLD must not exceed "
            "CLAUDE_MEMORY_GUARD_NOOP_THRESHOLD "
            f"({settings.guard_update_threshold} > {settings.guard_noop_threshold})"
        )
    if settings.rerank_provider == "cross-encoder" and not settings.rerank_model:
        raise ConfigError(
            "CLAUDE_MEMORY_RERANK_PROVIDER=cross-encoder needs CLAUDE_MEMORY_RERANK_MODEL: the"
            " folder of a sentence-transformers CrossEncoder, or a name already on disk"
        )
    if settings.rerank_provider == "http" and not settings.rerank_url:
        raise ConfigError(
            "CLAUDE_MEMORY_RERANK_PROVIDER=http needs CLAUDE_MEMORY_RERANK_URL: the endpoint's"
            " full URL, such as http://localhost:8080/v1/rerank"
        )
    if settings.rerank_hook_min_score is not None and (
        not settings.rerank_hooks or settings.rerank_provider == "none"
    ):
        raise ConfigError(
            "CLAUDE_MEMORY_RERANK_HOOK_MIN_SCORE gates the prompt hook on the reranker's"
            " score: it needs a CLAUDE_MEMORY_RERANK_PROVIDER and CLAUDE_MEMORY_RERANK_HOOKS=true"
        )
    if settings.rerank_hook_min_score is not None and settings.rerank_provider == "llm":
        raise ConfigError(
            "CLAUDE_MEMORY_RERANK_HOOK_MIN_SCORE cannot gate on the llm reranker: it answers"
            " an order, not a score per memory; use cross-encoder or http, or unset it"
        )
    if settings.db_pool_min_size > settings.db_pool_max_size:
        raise ConfigError(
            "CLAUDE_MEMORY_DB_POOL_MIN_SIZE must not exceed CLAUDE_MEMORY_DB_POOL_MAX_SIZE "
            f"({settings.db_pool_min_size} > {settings.db_pool_max_size})"
        )


def setting_names() -> list[str]:
    """The environment variable names, in table order (used by the docs test)."""
    return [variable_name(f.name.upper()) for f in fields(Settings)]
