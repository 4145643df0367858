"""What a memory says about the code: the files, symbols, settings and versions it names.

A coding agent's memory has a ground truth on disk: "the Go toolchain is pinned to 1.22 in
`go.mod`", "`HTTP_TIMEOUT=30s` in `.env.example`", "the migrations live in `db/migrate/`", "call
`sendProblem()` for every error". Each names something the working tree either still holds or
no longer does. These anchors are what a check against the tree looks at (issue #37); this
module only finds them in a memory's text, by rules a reader can follow:

- **path**: a token with a slash that ends in a file name with an extension or in a slash, or
  that has two slashes (`src/routes/invoices.ts`, `db/migrate/`, `internal/auth/jwt`), or a
  file name known to build tools or a dot file (`go.mod`, `package.json`, `Dockerfile`,
  `.env.example`). URLs, versions (`1.2.3`), host names and acronym pairs (`CI/CD`) are not
  paths.
- **symbol**: an identifier written as code, in backticks or followed by `()` (`sendProblem()`,
  `InvoiceService.create`, `` `tenant_counters` ``). Commands in backticks (with a space) are
  not symbols; their settings and versions still count.
- **setting**: a key stated with its value: `KEY=value` (environment style), `key = value` or
  `key: value` inside backticks, `--flag=value` / `--flag value` inside backticks.
- **version**: a package or tool with the version stated for it: `go 1.22`, `pnpm@9.12.0`,
  `express-rate-limit 7.4.1`, `"react": "^18.2.0"` (a version needs a dot after a space, so
  "port 8080" and "Node 20" are not versions).

Every anchor is found once, in the order of the text. Prose carries many false leads, so the
rules prefer missing an anchor to inventing one: a wrong anchor makes a fresh memory look
drifted, which costs more trust than an unchecked one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

AnchorKind = Literal["path", "symbol", "setting", "version"]
MAX_ANCHORS = 40  # a memory naming more is a listing, not a statement about a few things


@dataclass(frozen=True, slots=True)
class Anchor:
    """One thing a memory names: a path, a symbol, a setting's key or a package."""

    kind: AnchorKind
    name: str
    value: str | None = None  # the setting's value or the version stated


# Extensions of files people name in coding sessions (source, config, manifests, docs).
_EXTENSIONS = frozenset((
    "py", "pyi", "ts", "tsx", "js", "jsx", "mjs", "cjs", "go", "rs", "java", "kt", "kts",
    "scala", "rb", "php", "cs", "fs", "c", "h", "cc", "cpp", "hpp", "m", "mm", "swift", "dart",
    "ex", "exs", "erl", "hrl", "clj", "lua", "pl", "r", "jl", "sql", "json", "jsonc", "yaml",
    "yml", "toml", "ini", "cfg", "conf", "env", "properties", "md", "mdx", "rst", "txt", "lock",
    "mod", "sum", "xml", "gradle", "sh", "bash", "zsh", "fish", "ps1", "bat", "tf", "tfvars",
    "hcl", "proto", "graphql", "gql", "css", "scss", "sass", "less", "html", "htm", "vue",
    "svelte", "astro", "ipynb", "csv", "tsv", "dockerfile", "nix", "cmake", "mk",
))  # fmt: skip
_KNOWN_FILES = frozenset((
    "Dockerfile", "Makefile", "GNUmakefile", "Gemfile", "Procfile", "Justfile", "Rakefile",
    "Jenkinsfile", "Vagrantfile", "Brewfile", "Pipfile", "CODEOWNERS", "LICENSE", "Caddyfile",
    "Tiltfile",
))  # fmt: skip
_PATH_TOKEN = re.compile(r"(?<![\w@:/.~-])(?:~/|\.{1,2}/|/)?[\w.@+-]+(?:/[\w.@+-]*)*")
_DOTFILE = re.compile(r"^\.[a-z][\w-]*(?:\.[\w-]+)*$")  # .env, .npmrc; `.Seen` is a field
# Product names written like files ("Node.js", "Vue.js") are not paths in prose; in backticks
# a capitalised file (`App.tsx`) is one.
_PRODUCT = re.compile(r"^[A-Z][A-Za-z]*\.(?:js|ts)$")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
_VERSIONISH = re.compile(r"^v?\d+(?:\.\d+)*$")
_ACRONYM_PAIR = re.compile(r"^[A-Z0-9]{1,5}(?:/[A-Z0-9]{1,5})+$")  # CI/CD, TCP/IP, I/O
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_IDENTIFIER = r"[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*"
_SYMBOL = re.compile(rf"^({_IDENTIFIER})(?:\(\))?$")
_CALL = re.compile(rf"(?<![\w.`/-])({_IDENTIFIER})\(\)")
_ENV_SETTING = re.compile(r"(?<![\w-])([A-Z][A-Z0-9_]{1,63})=(\"[^\"\n]*\"|'[^'\n]*'|[^\s`,;]+)")
_CODE_SETTING = re.compile(
    r"^\s*([A-Za-z_][\w.-]{0,63})\s*(?:=|:)\s*(\"[^\"]*\"|'[^']*'|[^\s,;]+)\s*$"
)
_FLAG_SETTING = re.compile(
    r"(?<![\w-])(--[a-z][\w-]{1,40})(?:=|\s+)(\"[^\"]*\"|'[^']*'|[^\s-][^\s]*)"
)
_AT_VERSION = re.compile(
    r"(?<![\w.@/-])(@?[A-Za-z][\w.-]*(?:/[\w.-]+)?)@[~^=v]?(\d+(?:\.\d+){0,3}(?:-[\w.]+)?)\b"
)
_SPACE_VERSION = re.compile(
    r"(?<![\w.@/-])([A-Za-z][\w.-]*[A-Za-z0-9])\s+v?(\d+\.\d+(?:\.\d+){0,2}(?:-[\w.]+)?)\b"
)
_JSON_VERSION = re.compile(
    r"\"(@?[A-Za-z][\w.-]*(?:/[\w.-]+)?)\"\s*:\s*\"[~^>=<]*\s*(\d+(?:\.\d+){0,3}(?:-[\w.]+)?)\""
)
# Words before a version that name no package ("in 1.2", "to 2.0", "version 3.1").
_NOT_PACKAGES = frozenset((
    "a", "an", "the", "to", "from", "in", "on", "at", "of", "for", "by", "with", "and", "or",
    "than", "then", "since", "until", "before", "after", "about", "is", "was", "be", "been",
    "are", "were", "version", "versions", "release", "releases", "v", "vs", "is", "now",
))  # fmt: skip


def anchors_of(text: str) -> list[Anchor]:
    """The anchors `text` names, each once, in the order they appear (at most MAX_ANCHORS)."""
    found: dict[tuple[str, str], Anchor] = {}
    prose = _URL.sub(" ", text)
    spans = [(m.start(), m.group(1)) for m in _BACKTICKED.finditer(prose)]
    located: list[tuple[int, Anchor]] = []
    for start, code in spans:
        located += [(start, anchor) for anchor in _in_code(code)]
    located += _settings(prose) + _versions(prose) + _paths(prose) + _calls(prose)
    for _, anchor in sorted(located, key=lambda pair: pair[0]):
        key = (anchor.kind, anchor.name)
        if key not in found:
            found[key] = anchor
    return list(found.values())[:MAX_ANCHORS]


def _in_code(code: str) -> list[Anchor]:
    """A backticked span: a path, a symbol or a `key = value` setting."""
    code = code.strip()
    setting = _CODE_SETTING.match(code)
    if setting and not _ENV_SETTING.fullmatch(code):
        return [Anchor("setting", setting.group(1), _unquoted(setting.group(2)))]
    if " " in code:
        return []  # a command: its flags, settings and versions are found in the prose pass
    if _is_path(code):
        return [Anchor("path", code)]
    symbol = _SYMBOL.match(code)
    if symbol and not _VERSIONISH.match(code) and not code.isupper():
        return [Anchor("symbol", symbol.group(1))]
    return []


def _settings(text: str) -> list[tuple[int, Anchor]]:
    found = [
        (m.start(), Anchor("setting", m.group(1), _unquoted(m.group(2))))
        for m in _ENV_SETTING.finditer(text)
    ]
    for start, code in ((m.start(), m.group(1)) for m in _BACKTICKED.finditer(text)):
        found += [
            (start + m.start(), Anchor("setting", m.group(1), _unquoted(m.group(2))))
            for m in _FLAG_SETTING.finditer(code)
        ]
    return found


def _versions(text: str) -> list[tuple[int, Anchor]]:
    found = []
    for pattern in (_AT_VERSION, _JSON_VERSION, _SPACE_VERSION):
        for match in pattern.finditer(text):
            name = match.group(1)
            if name.lower() in _NOT_PACKAGES or _is_path(name):
                continue
            found.append((match.start(), Anchor("version", name.lower(), match.group(2))))
    return found


def _paths(text: str) -> list[tuple[int, Anchor]]:
    found = []
    for match in _PATH_TOKEN.finditer(text):
        token = match.group(0).rstrip(".,;:)")
        if _is_path(token) and not _PRODUCT.match(token):
            found.append((match.start(), Anchor("path", token)))
    return found


def _calls(text: str) -> list[tuple[int, Anchor]]:
    return [(m.start(), Anchor("symbol", m.group(1))) for m in _CALL.finditer(text)]


def _is_path(token: str) -> bool:
    """Whether `token` names a file or folder (see the module's rules)."""
    if not token or "://" in token or _VERSIONISH.match(token) or "@" in token:
        return False
    if "/" in token:
        if _ACRONYM_PAIR.match(token):
            return False
        parts = [p for p in token.split("/") if p not in ("", ".", "..", "~")]
        if not parts:
            return False
        return token.endswith("/") or token.count("/") >= 2 or _has_extension(parts[-1])
    if token in _KNOWN_FILES or _DOTFILE.match(token):  # Makefile; .env, .npmrc, .env.example
        return True
    return _has_extension(token) and not _looks_like_host(token)


def _has_extension(name: str) -> bool:
    stem, dot, extension = name.rpartition(".")
    return bool(dot and stem and extension.lower() in _EXTENSIONS)


def _looks_like_host(token: str) -> bool:
    """`api.example.com` is a host, `app.module.ts` a file: hosts end in a short TLD-like part."""
    return token.count(".") >= 2 and token.rsplit(".", 1)[-1].lower() in ("com", "org", "net", "io")


def _unquoted(value: str) -> str:
    """A stated value without its quotes, or without the sentence's punctuation after it."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value.rstrip(".,;:!?)")
