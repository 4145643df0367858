"""Remove secrets from text before it is written to the memory database.

Everything a developer says to their agent can end up stored as a memory:
pasted ``.env`` files, ``curl`` commands with auth headers, connection
strings, stack traces that print a config. Stored memories are later searched,
shown and fed back into prompts, so a credential that slips in once keeps
leaking. :func:`redact` runs over every text before it is stored and replaces
each secret with a marker naming its kind, e.g. ``[REDACTED:github-token]``.

Design rules:

* Each kind of secret is one compiled pattern in :data:`_RULES`. If the pattern
  has a group named ``secret`` only that group is replaced (the key of
  ``password=...``, the shape of a URL, the ``Bearer`` keyword stay); otherwise
  the whole match is replaced. An optional ``accept`` check can veto a match
  (placeholders such as ``${DB_PASSWORD}``, code such as ``token=get_token()``).
* False positives are costly: this runs over ordinary chat and code. Patterns
  rely on documented token prefixes or on an explicit ``key = value`` context,
  never on "looks random" alone.
* Idempotent: no pattern matches a marker, and a value that already holds a
  marker is vetoed, so a second run changes nothing and counts 0.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Redaction", "redact"]


@dataclass(frozen=True, slots=True)
class Redaction:
    """Result of :func:`redact`."""

    text: str  # the text with every secret replaced
    count: int  # how many secrets were replaced


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str  # goes into the marker: [REDACTED:<kind>]
    pattern: re.Pattern[str]  # a `secret` group, if any, is all that is replaced
    accept: Callable[[re.Match[str]], bool] | None = None  # False keeps the match as is


def _marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


# --- checks for context-based rules (assignments, URLs) ----------------------

# Values that stand for a secret without being one: templates, masks, types,
# status words, and markers left by an earlier run.
_PLACEHOLDER = re.compile(
    r"""
      \$\w*                                  # $PASSWORD, or the $ of ${VAR} / $(cmd)
    | \$\{[^}]*\} | \$\([^)]*\)              # ${DB_PASSWORD}, $(cat file) (quoted values)
    | <[^<>]*>                               # <your-password>
    | \{\{.*\}\} | \{\w*\}                   # {{ template }}, {name}
    | %\(?\w*\)?[sd]? | %\w+%                # %s, %(password)s, %PASSWORD%
    | [*x.\u2022#?_:-]+                      # ***, xxxx, ..., ----
    | (?:[\w-]*[_-])?your[_-][\w-]*           # your_password, xoxb-your-token
    | [\w-]*[_-]here                         # TOKEN_GOES_HERE
    | \[[A-Z_]+\]                            # [PAD], [CLS]: tokenizer tags
    | none | null | nil | undefined | true | false | empty | string | str | bytes
    | int | number | any | password | passwd | pass | pwd | secret | token
    | changeme | example | dummy | placeholder | redacted | masked | hidden
    | ok | yes | no | set | unset | missing | required | optional | done
    | valid | invalid | expired | provided | configured | enabled | disabled
    | n/a | tbd | todo
    """,
    re.IGNORECASE | re.VERBOSE,
)

# Values that are code, not a literal. A name ending in a credential word
# (`api_key=api_key`, `"challengePassword"`, `password=settings.DB_PASSWORD`),
# and, unquoted, any attribute path or snake/UPPER name (`unk_token=unk_piece`).
_ENDS_WITH_CREDENTIAL_WORD = re.compile(
    r"(?:[A-Za-z_][A-Za-z0-9_.]*?(?:[_.]|(?<=[a-z0-9])(?=[A-Z])))?"
    r"(?i:password|passwd|passphrase|pass|pwd|secret|token|key|apikey)"
)
_CODE_WORD = r"(?:_*[a-z]+(?:_[a-z]+)*|_*[A-Z]+(?:_[A-Z]+)*|[A-Za-z][a-z]+(?:[A-Z][a-z]+)*)"
_CODE_REFERENCE = re.compile(
    rf"{_CODE_WORD}(?:\.{_CODE_WORD})+"  # attribute path: config.tts_pad_token
    r"|_*[a-z]+(?:_[a-z]+)+|_*[A-Z]+(?:_[A-Z]+)+"  # snake_case / UPPER_CASE name
)
_CODE_NAME = re.compile(  # TileGlobal, camelCase, X-Access-Token
    rf"{_CODE_WORD}(?:\.{_CODE_WORD})*|[A-Za-z][a-z]*(?:-[A-Za-z][a-z]*)+"
)
_NUMBER = re.compile(r"[-+]?[0-9]*\.?[0-9]+")
_LETTERS_ONLY = re.compile(r"[A-Za-z]+")

# What may follow an unquoted value written after a space (`password: x`).
_END_OF_VALUE = re.compile(r"[ \t]*(?:[;}]|\r?\n|\Z)")


def _is_placeholder(value: str) -> bool:
    # A value holding a marker was redacted by an earlier rule (or run).
    return "[REDACTED:" in value or _PLACEHOLDER.fullmatch(value) is not None


def _accept_assignment(m: re.Match[str]) -> bool:
    """Veto `key = value` matches whose value is not a literal secret."""
    value = m["secret"]
    if _is_placeholder(value):
        return False
    if m["key"].lower().endswith("pwd") and value.startswith(("/", "~")):
        return False  # PWD=/home/me is the working directory
    if _ENDS_WITH_CREDENTIAL_WORD.fullmatch(value):
        return False  # api_key=api_key, "challengePassword", settings.DB_PASSWORD
    if m["q"] is not None:
        return True  # a quoted literal: "password": "hunter2"
    if m["op"] == ":" and not m["sp"]:
        return False  # `passwd:dir`: YAML needs a space after the colon
    if m.string[m.end() : m.end() + 1] in ("(", "["):
        return False  # token=get_token(), password=os.environ["PW"]
    if _CODE_REFERENCE.fullmatch(value):
        return False  # unk_token=unk_piece, token=config.pad_token
    if _NUMBER.fullmatch(value) and not value.isdigit():
        return False  # -1, 0.5: a setting, not a password
    if m["sp"]:
        # After a space the value must be one non-word token ending the line:
        # `password: hunter2` is config; `Password: must be 8+ chars`,
        # `password: SecretStr` and `username, password = creds` are not.
        return not _LETTERS_ONLY.fullmatch(value) and bool(_END_OF_VALUE.match(m.string, m.end()))
    return True


def _looks_random(value: str) -> bool:
    """Generated tokens mix digits or letter cases; names and words do not."""
    if any(c.isspace() for c in value) or value.isdigit():
        return False
    if any(c.isdigit() for c in value):
        return True
    mixed_case = value.lower() != value != value.upper()
    return mixed_case and len(value) >= 16 and not _CODE_NAME.fullmatch(value)


def _accept_secret_assignment(m: re.Match[str]) -> bool:
    # Tokens and API keys are long generated strings. `max_token=4096`,
    # `"cls_token": "[CLS]"`, `pad_token="__null__"`, `"n_token": "vocab_size"`
    # and `"locktoken": "RFC 2518"` are not credentials.
    value = m["secret"]
    return len(value) >= 8 and _looks_random(value) and _accept_assignment(m)


def _accept_url_password(m: re.Match[str]) -> bool:
    return not _is_placeholder(m["secret"])


# --- patterns ----------------------------------------------------------------

# `<KEY><op><value>` where KEY ends with one of the keywords (DB_PASSWORD,
# apiKey, "client_secret"), op is = : := =>, and value is quoted or a bare word.
_ASSIGNMENT = r"""
    (?P<key>(?i:{keywords}))(?![A-Za-z0-9_-])  # key ends with the keyword
    \\?["']?                                   # closing quote of a quoted key
    [ \t]*(?P<op>:=|=>|=|:)(?!=)              # = : := =>, not ==
    (?P<sp>[ \t]*)
    (?P<q>\\?["'`])?                           # optional opening quote
    (?P<secret>(?(q)
        (?:(?!(?P=q))[^\n])+                   # quoted: up to the closing quote
      | (?:[^\s"'`,;&(){{}}\[\]<>]|&(?![\w.-]*=|&))*    # bare: up to a separator; `&`
        [^\s"'`,;&(){{}}\[\]<>.:]                       # ends it only as `&name=` or `&&`
    ))
    (?(q)(?P=q))
"""

_RULES: tuple[_Rule, ...] = (
    # Whole PEM block, multi-line; a truncated paste loses its header and body lines.
    # A bare `-----BEGIN ... PRIVATE KEY-----` (in docs or code) stays.
    _Rule(
        "private-key",
        re.compile(
            r"""
            -----BEGIN[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----
            (?:
                # complete block: base64, header lines (Proc-Type: 4,ENCRYPTED),
                # real or JSON-escaped newlines, nothing code-like in between
                (?:(?!-----)[A-Za-z0-9+/=\s:,.\-\\])*
                -----END[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----
              | (?:                                     # truncated paste: header and
                    (?:\r?\n|\\n)                         # base64 lines, at least one
                    (?:(?:Proc-Type|DEK-Info|Comment|Version):[^\n\\]*
                      | [A-Za-z0-9+/]{16,}={0,2}
                      | [A-Za-z0-9+/]+={1,2})
                )+
            )
            """,
            re.VERBOSE,
        ),
    ),
    # sk-ant- must run before the OpenAI sk- rule.
    _Rule("anthropic-key", re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}(?![\w-])")),
    # sk-... / sk-proj-...: random, so it has a digit and an upper-case letter
    # (which keeps out slugs like sk-learn-compatible-estimators).
    _Rule(
        "openai-key",
        re.compile(
            r"(?<![\w-])sk-(?=[\w-]*[0-9])(?=[\w-]*[A-Z])[A-Za-z0-9_-]{20,}(?![\w-])",
            re.ASCII,
        ),
    ),
    _Rule(
        "github-token",
        re.compile(
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9])"
            r"|github_pat_[A-Za-z0-9_]{22,255}(?![A-Za-z0-9_]))"
        ),
    ),
    _Rule(
        "gitlab-token",
        re.compile(
            r"(?<![\w-])gl(?:pat|dt|rt|ptt|ft|soat)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*",
            re.ASCII,
        ),
    ),
    # xoxb-/xoxp-/xoxa-/xoxr-/xoxs-/xoxe.xoxp-/xapp-: a numeric id follows the prefix.
    _Rule(
        "slack-token",
        re.compile(
            r"(?<![\w-])(?:xox[abprsoe](?:\.xox[bp])?|xapp)-[0-9]+-[A-Za-z0-9-]{6,}[A-Za-z0-9]",
            re.ASCII,
        ),
    ),
    _Rule(
        "slack-webhook",
        re.compile(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/"
            r"(?P<secret>[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)+)"
        ),
    ),
    _Rule(
        "stripe-key",
        re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}(?![A-Za-z0-9])"),
    ),
    _Rule(
        "aws-access-key",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ),
    # A bare 40-character base64 string is too common to flag; require the key.
    _Rule(
        "aws-secret-key",
        re.compile(
            r"(?i:(?:aws_?)?secret_?access_?key)\\?[\"']?[ \t]*(?::=|=>|=|:)[ \t]*\\?[\"']?"
            r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
    ),
    # Azure connection strings: AccountKey= (Storage, Cosmos DB), SharedAccessKey= (Service
    # Bus, Event Hubs, IoT Hub), AccessKey= (SignalR): base64 of 32 or 64 random bytes.
    _Rule(
        "azure-key",
        re.compile(
            r"(?<![A-Za-z])(?i:(?:account|sharedaccess|access)key)[ \t]*=[ \t]*"
            r"(?P<secret>(?=[A-Za-z0-9+/]*[0-9+/])[A-Za-z0-9+/]{30,}={0,2})(?![A-Za-z0-9+/=])"
        ),
    ),
    # Shared access signatures (Azure SAS URLs and SharedAccessSignature=): the `sig` parameter
    # is what grants access; the rest of the URL (account, container, expiry) stays readable.
    _Rule("azure-sas", re.compile(r"(?<=[?&;])sig=(?P<secret>[A-Za-z0-9%+/=_-]{20,})")),
    _Rule("google-api-key", re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])", re.ASCII)),
    _Rule("npm-token", re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    _Rule("huggingface-token", re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9])")),
    _Rule(
        "jwt",
        re.compile(
            r"(?<![\w-])eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}(?![\w-])",
            re.ASCII,
        ),
    ),
    # scheme://user:password@host: the password only. The user part excludes
    # brackets so `[REDACTED:...]` left by a token rule is never taken for a user.
    _Rule(
        "password",
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://"  # scheme
            r"[^\s:@/?#\[\]]*"  # user, may be empty: redis://:pw@host
            r":(?P<secret>[^\s/?#]+)@"  # up to the last @ of the authority
        ),
        _accept_url_password,
    ),
    # Bearer <token>: at least 16 token characters including a digit, so
    # "a Bearer token in the header" or "Bearer YOUR_TOKEN" stay.
    _Rule(
        "bearer-token",
        re.compile(
            r"(?<![A-Za-z0-9])(?i:bearer)[ \t]+"
            r"(?P<secret>(?=[A-Za-z0-9._~+/-]*[0-9])[A-Za-z0-9._~+/-]{15,}[A-Za-z0-9_~+/-]=*)"
        ),
    ),
    # Authorization: Basic <base64> at the end of the header value, not a plain word.
    _Rule(
        "basic-auth",
        re.compile(
            r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:basic)[ \t]+"
            r"(?![A-Za-z][a-z]*(?![A-Za-z0-9+/=]))"
            r"(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?=[ \t]*(?:[\"'\r\n,]|\Z))"
        ),
    ),
    _Rule(
        "password",
        re.compile(
            _ASSIGNMENT.format(keywords=r"pass(?:word|wd|phrase)|pwd"),
            re.VERBOSE,
        ),
        _accept_assignment,
    ),
    # token, secret, api_key, access_token, client_secret, auth_token, x-api-key, ...
    _Rule(
        "secret",
        re.compile(
            _ASSIGNMENT.format(keywords=r"secret(?:[_-]?key)?|token|api[_-]?key|private[_-]?key"),
            re.VERBOSE,
        ),
        _accept_secret_assignment,
    ),
)


def _apply(rule: _Rule, text: str) -> tuple[str, int]:
    replaced = 0
    partial = "secret" in rule.pattern.groupindex

    def replace(m: re.Match[str]) -> str:
        nonlocal replaced
        if rule.accept is not None and not rule.accept(m):
            return m[0]
        replaced += 1
        if not partial:
            return _marker(rule.kind)
        start, end = m.start("secret") - m.start(), m.end("secret") - m.start()
        return m[0][:start] + _marker(rule.kind) + m[0][end:]

    return rule.pattern.sub(replace, text), replaced


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` by ``[REDACTED:<kind>]``.

    Keys, URL shapes and the ``Bearer`` keyword are kept; only the secret part
    is replaced. Running it on its own output changes nothing.
    """
    count = 0
    for rule in _RULES:
        text, replaced = _apply(rule, text)
        count += replaced
    return Redaction(text=text, count=count)
