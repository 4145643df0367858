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
* Patterns see the text as a reader does: zero-width characters and soft
  hyphens dropped, percent-escapes inside a word decoded (:func:`_normalised`).
  The whole original span of a secret found that way is replaced; the rest of
  the text is kept exactly.
"""

import binascii
import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial

from server.core.readable import Reading, readable

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
    # The `secret` group holds several secrets (a Cookie header): each `secret` group of this
    # pattern inside it is replaced, and counted, on its own.
    inner: re.Pattern[str] | None = None


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


def _accept_placeholder_free(m: re.Match[str]) -> bool:
    return not _is_placeholder(m["secret"])


# Last word of a key that names something about a secret, not the secret itself.
_DESCRIBES_SECRET = frozenset(
    """
    file path dir url uri endpoint name names id ids length len count size ttl expiry expires
    expiration lifetime timeout type kind mode enabled header field param column prefix limit
    min max label version env var ref domain host port provider issuer audience scope scopes
    method strategy backend region user username login email algorithm alg hash location
    """.split()  # noqa: SIM905 (a word list reads better as words)
)
_WORD_PARTS = re.compile(r"[_.-]+|(?<=[a-z0-9])(?=[A-Z])")


def _accept_secret_named_assignment(m: re.Match[str]) -> bool:
    last_word = _WORD_PARTS.split(m["key"])[-1].lower()
    return last_word not in _DESCRIBES_SECRET and _accept_secret_assignment(m)


def _accept_password_assignment(m: re.Match[str]) -> bool:
    # `PASS: 12` in a test summary is a count; DB_PASS=123456 still goes.
    standalone = m["key"].lower() == "pass" and not m.string[: m.start("key")].endswith(
        ("_", "-", ".")
    )
    return not (standalone and m["secret"].isdigit()) and _accept_assignment(m)


# What a sentence says a password is, when it is not the password: a way it is kept or made.
_SAID_NOT_PASSWORD = re.compile(
    r"(?i:sha-?\d*|md5|utf-?\d+|base64|aes-?\d*|rsa-?\d*|argon2\w*|pbkdf2\w*|[bs]crypt\w*"
    r"|\d+\+?(?:-?(?:chars?|characters?|digits?|bytes?|bits?|letters?|long))?)"
    r"|.*-[a-z]{3,}"  # SHA256-hashed, 2FA-protected, 64-bit
)


def _accept_said_password(m: re.Match[str]) -> bool:
    """`password is Tr0ub4dor&3`, not `password is required`, `is 12`, `is SHA256-hashed`."""
    value = m["secret"]
    if _is_placeholder(value) or value[0] in "$<{%[/~" or "://" in value:
        return False
    if _ENDS_WITH_CREDENTIAL_WORD.fullmatch(value) or _CODE_REFERENCE.fullmatch(value):
        return False
    if value.isdigit():
        return len(value) >= 6
    if _SAID_NOT_PASSWORD.fullmatch(value) or _NUMBER.fullmatch(value):
        return False
    has_symbol = any(not c.isalnum() and c not in "-_." for c in value)
    return len(value) >= 6 and (has_symbol or _looks_random(value))


def _accept_command_value(m: re.Match[str]) -> bool:
    """A credential given to a command: not a placeholder, a variable or a uid:gid pair."""
    value = m["secret"]
    if _is_placeholder(value) or value[0] in "$<{%[":
        return False
    user = m.groupdict().get("user")
    return not (user is not None and user.isdigit() and value.isdigit())  # uid:gid, -u 0:0


def _accept_option_value(m: re.Match[str]) -> bool:
    # `use --password to set it`, `--with-token ghp_` (a prefix in a lesson): not generated.
    return _looks_random(m["secret"]) and _accept_command_value(m)


def _is_cookie_value(value: str) -> bool:
    # theme=dark and lang=en stay readable; session ids are long or hold digits.
    return not _is_placeholder(value) and not (_LETTERS_ONLY.fullmatch(value) and len(value) < 16)


def _accept_authorization(m: re.Match[str]) -> bool:
    value = m["secret"]
    return not _is_placeholder(value) and len(value) >= 8 and _looks_random(value)


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

# Key words that name a password (DB_PASS and dbPass too, not bypass or compass) and other
# secrets (NPM_AUTH, GOOGLE_CREDENTIALS, not oauth or author).
_PASSWORD_WORDS = r"pass(?:word|wd|phrase)|pwd|(?<![A-Za-z0-9])pass|(?-i:(?<=[a-z0-9])Pass)"
_SECRET_WORDS = (
    r"secret(?:[_-]?key)?|token|api[_-]?key|private[_-]?key|credentials?"
    r"|(?<![A-Za-z0-9])auth|(?-i:(?<=[a-z0-9])Auth)"
)

# A value given to a command-line option: quoted or one word.
_OPTION_VALUE = r"""(?P<q>["']?)(?P<secret>[^\s"'-][^\s"']*)(?P=q)"""
# The rest of a command after its name, up to the option (one shell command, one line).
_SAME_COMMAND = r"(?![\w-])[^\n|;&]{0,300}?[ \t]"  # bounded: no quadratic scans

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
    # Bus, Event Hubs, IoT Hub), AccessKey= (SignalR): base64 of 32 or 64 random bytes. One
    # without a digit (an all-`A` key) still goes when it is padded base64;
    # `AccessKey=ThisIsJustAVeryLongConfigSettingName` is a setting's name.
    _Rule(
        "azure-key",
        re.compile(
            r"(?<![A-Za-z])(?i:(?:account|sharedaccess|access)key)[ \t]*=[ \t]*"
            r"(?P<secret>(?=[A-Za-z0-9+/]*[0-9+/])[A-Za-z0-9+/]{30,}={0,2}"
            r"|(?:[A-Za-z0-9+/]{4}){7,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=))"  # padded base64
            r"(?![A-Za-z0-9+/=])"
        ),
    ),
    # Shared access signatures (Azure SAS URLs and SharedAccessSignature=): the `sig` parameter
    # is what grants access; the rest of the URL (account, container, expiry) stays readable.
    _Rule("azure-sas", re.compile(r"(?<=[?&;])sig=(?P<secret>[A-Za-z0-9%+/=_-]{20,})")),
    _Rule("google-api-key", re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])", re.ASCII)),
    _Rule("npm-token", re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    _Rule("huggingface-token", re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9])")),
    # Provider prefixes. Each pattern starts with its literal prefix (so the regex engine
    # can jump to it) and checks the character before it with a lookbehind after it.
    _Rule(
        "sendgrid-key",
        re.compile(r"SG\.(?<![\w.-]SG\.)[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}(?![\w-])"),
    ),
    _Rule("pypi-token", re.compile(r"pypi-(?<![\w-]pypi-)AgE[A-Za-z0-9_-]{50,}")),
    _Rule("twilio-key", re.compile(r"SK(?<![A-Za-z0-9]SK)[0-9a-f]{32}(?![A-Za-z0-9])")),
    _Rule("mailgun-key", re.compile(r"key-(?<![\w-]key-)[0-9a-f]{32}(?![A-Za-z0-9])")),
    _Rule("shopify-token", re.compile(r"shp(?<![\w-]shp)(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?!\w)")),
    _Rule("digitalocean-token", re.compile(r"do(?<![\w-]do)[opr]_v1_[a-f0-9]{64}(?!\w)")),
    _Rule("vault-token", re.compile(r"hv(?<![\w.-]hv)[sbr]\.[A-Za-z0-9_-]{24,}")),
    _Rule(
        "doppler-token",
        re.compile(r"dp\.(?<![\w.-]dp\.)(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}(?!\w)"),
    ),
    _Rule("databricks-token", re.compile(r"dapi(?<![\w-]dapi)[0-9a-f]{32}(?:-[0-9])?(?!\w)")),
    _Rule("grafana-token", re.compile(r"gl(?<![\w-]gl)(?:sa|c)_[A-Za-z0-9_+/=-]{32,}")),
    _Rule("linear-key", re.compile(r"lin_api_(?<![\w-]lin_api_)[A-Za-z0-9]{40}(?!\w)")),
    _Rule("postman-key", re.compile(r"PMAK-(?<![\w-]PMAK-)[0-9a-f]{24}-[0-9a-f]{34}(?!\w)")),
    _Rule("newrelic-key", re.compile(r"NRAK-(?<![\w-]NRAK-)[A-Z0-9]{27}(?!\w)")),
    _Rule("age-secret-key", re.compile(r"AGE-SECRET-KEY-1[0-9A-Z]{58}")),
    _Rule("telegram-bot-token", re.compile(r"(?<![\w:])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![\w-])")),
    _Rule(
        "jwt",
        re.compile(
            r"(?<![\w-])eyJ[A-Za-z0-9_-]{10,}(?:[ \t]*\.[ \t]*[A-Za-z0-9_-]{10,}){2}(?![\w-])",
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
        _accept_placeholder_free,
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
    # Any other Authorization scheme (Token, Bot, SSWS, none at all): a generated value.
    _Rule(
        "authorization",
        re.compile(
            r"(?<![\w-])(?i:(?:proxy-)?authorization)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
            r"(?:[A-Za-z][\w-]*[ \t]+)?(?P<secret>[A-Za-z0-9._~+/=-]{8,})"
        ),
        _accept_authorization,
    ),
    # Cookie and Set-Cookie headers, curl --cookie: each cookie's value, the names stay.
    _Rule(
        "cookie",
        re.compile(
            r"(?<![\w-])(?:(?i:set-cookie|cookie)\\?[\"']?[ \t]*:|--cookie(?:[ \t]+|=))"
            r"[ \t]*\\?[\"']?(?P<secret>[^\r\n\"'\\]+)"
        ),
        _accept_placeholder_free,
        inner=re.compile(
            r"(?:^|;)[ \t]*"
            r"(?!(?i:path|domain|expires|max-age|samesite|priority|secure|httponly|partitioned)"
            r"[ \t]*(?:[=;]|$))"
            r"[^=;\s]+[ \t]*=[ \t]*(?P<secret>[^;\s]+)"
        ),
    ),
    # curl -u user:pass, --user user:pass (wget and httpie take the same form).
    _Rule(
        "password",
        re.compile(
            r"(?<![\w-])(?:-u[ \t]*|--user(?:[ \t]+|=))(?P<q>[\"']?)"
            r"(?P<user>[^\s:\"'@]+):(?P<secret>[^\s\"']+)(?P=q)"
        ),
        _accept_command_value,
    ),
    # mysql -pSECRET: the password is attached (`-p name` prompts and names a database).
    _Rule(
        "password",
        re.compile(
            r"(?<![\w-])(?:mysql(?:dump|admin|import|check|show)?|mariadb(?:-dump|-admin)?)"
            + _SAME_COMMAND
            + r"-p(?P<q>[\"']?)(?P<secret>[^\s\"']+)(?P=q)"
        ),
        _accept_command_value,
    ),
    # docker login -p X, sshpass -p X, redis-cli -a X: short options that take a password.
    _Rule(
        "password",
        re.compile(
            r"(?<![\w-])(?:docker[ \t]+login" + _SAME_COMMAND + r"(?:-p|--password)"
            r"|sshpass" + _SAME_COMMAND + r"-p|redis-cli" + _SAME_COMMAND + r"-a)"
            r"(?:[ \t]*|=)" + _OPTION_VALUE
        ),
        _accept_command_value,
    ),
    # --password X, --db-pass X, --token X, --api-key=X: any option named for a secret.
    _Rule(
        "secret",
        re.compile(
            r"(?<![\w-])--(?:[A-Za-z0-9]+-)*"
            r"(?:password|passwd|pass|passphrase|token|secret|api-?key|credentials?)"
            r"(?:[ \t]+|=)" + _OPTION_VALUE
        ),
        _accept_option_value,
    ),
    _Rule(
        "password",
        re.compile(
            _ASSIGNMENT.format(keywords=_PASSWORD_WORDS),
            re.VERBOSE,
        ),
        _accept_password_assignment,
    ),
    # token, secret, api_key, access_token, client_secret, auth_token, x-api-key, ...
    _Rule(
        "secret",
        re.compile(
            _ASSIGNMENT.format(keywords=_SECRET_WORDS),
            re.VERBOSE,
        ),
        _accept_secret_assignment,
    ),
    # The word inside the name: SECRET_KEY_BASE, jwt_secret_value, passwordHash. Only values
    # that look generated, and not names that describe the secret (SECRET_KEY_FILE, TOKEN_TTL).
    _Rule(
        "secret",
        re.compile(
            _ASSIGNMENT.format(
                keywords=rf"(?:{_PASSWORD_WORDS}|{_SECRET_WORDS})"
                r"(?-i:[_.-][A-Za-z0-9_.-]{0,60}[A-Za-z0-9]|[A-Z][A-Za-z0-9_.-]{0,60}[A-Za-z0-9])"
            ),
            re.VERBOSE,
        ),
        _accept_secret_named_assignment,
    ),
    # Said in a sentence: "the sudo password is Tr0ub4dor&3", "my passphrase was set to ...".
    _Rule(
        "password",
        re.compile(
            r"(?<![A-Za-z0-9_])(?i:pass(?:word|phrase|code)|passwd)"
            r"(?:[ \t]+(?i:for|of|on|to)(?:[ \t]+[\w.@/:-]{1,64}){1,3}?)?"  # for the staging db
            r"(?:[ \t]+(?i:is|was)|'s)"
            r"(?:[ \t]+(?i:now|still|just|actually|(?:set|changed|reset)[ \t]+to))?"
            r"[ \t]*:?[ \t]+(?P<q>[\"'`]?)"
            r"(?P<secret>[^\s\"'`]*[^\s\"'`.,;:!?)])(?P=q)"
        ),
        _accept_said_password,
    ),
)


# An edit of one rule: text[start:end] becomes the marker.
_Edit = tuple[int, int, str]


def _edits(rule: _Rule, text: str) -> list[_Edit]:
    partial = "secret" in rule.pattern.groupindex
    marker = _marker(rule.kind)
    edits: list[_Edit] = []
    for m in rule.pattern.finditer(text):
        if rule.accept is not None and not rule.accept(m):
            continue
        if rule.inner is None:
            span = m.span("secret") if partial else m.span()
            edits.append((*span, marker))
            continue
        offset = m.start("secret")
        edits.extend(
            (offset + value.start("secret"), offset + value.end("secret"), marker)
            for value in rule.inner.finditer(m["secret"])
            if _is_cookie_value(value["secret"])
        )
    return edits


def _replaced(text: str, edits: list[_Edit]) -> str:
    pieces: list[str] = []
    position = 0
    for start, end, marker in edits:
        pieces += (text[position:start], marker)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


# --- tokens written so that no pattern sees them -------------------------------

# Where a token rule's match can start: a line that ends after one of these and is not yet a
# whole token is joined with the next line (server/core/readable.py).
_WRAPPED = re.compile(
    r"(?<![A-Za-z0-9_])(?P<token>"
    r"(?:gh[pousr]_|github_pat_|sk-|[srp]k_(?:live|test)_|AKIA|ASIA|gl[a-z]{1,4}[-_]|xox|xapp-"
    r"|AIza|npm_|hf_|SG\.|pypi-|shp|do[opr]_|hv[sbr]\.|dp\.|dapi|lin_api_|PMAK-|NRAK-"
    r"|AGE-SECRET-KEY-|eyJ|SK[0-9a-f]|key-|[0-9]{8,10}:AA)[\w.+/=-]*)"
    r"(?P<wrap>\r?\n[ \t]*)(?=[\w.+/=-])",
    re.ASCII,
)
# The rules a whole token matches on its own (no context, no veto).
_TOKEN_PATTERNS = tuple(
    rule.pattern
    for rule in _RULES
    if rule.accept is None
    and "secret" not in rule.pattern.groupindex
    and rule.kind != "private-key"
)


def _is_whole_token(text: str) -> bool:
    return any(pattern.fullmatch(text) for pattern in _TOKEN_PATTERNS)


# A run of base64 (either alphabet) long enough to hold a token once decoded.
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_KIND = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
_BASE64_DEPTH = 2  # base64 of base64 of a token is still read; deeper is not


def _decoded(run: str) -> str | None:
    """The text `run` is base64 of, or None if it is not base64 of text."""
    body = run.rstrip("=")
    if "-" in body or "_" in body:
        if "+" in body or "/" in body:
            return None
        body = body.translate(_URL_SAFE)
    body = body[: len(body) - 1] if len(body) % 4 == 1 else body
    try:
        text = binascii.a2b_base64(body + "=" * (-len(body) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    return None if _CONTROL.search(text) else text


_URL_SAFE = str.maketrans("-_", "+/")


def _base64_edits(text: str, depth: int) -> list[_Edit]:
    """Each base64 run whose decoded text holds a secret, replaced whole."""
    edits: list[_Edit] = []
    for m in _BASE64.finditer(text):
        decoded = _decoded(m[0])
        if decoded is None:
            continue
        short = len(decoded) <= _CACHED_CHARS
        kind = (_cached_secret_kind if short else _secret_kind)(decoded, depth + 1)
        if kind:
            edits.append((*m.span(), _marker(kind)))
    return edits


def _secret_kind(text: str, depth: int) -> str | None:
    """The kind of the first secret in `text`, or None if it holds none."""
    inner = _redact(text, depth)
    if not inner.count:
        return None
    kind = _KIND.search(inner.text)
    return kind[1] if kind else "secret"


# The same cursor or token comes back turn after turn; long decoded texts are not kept.
_CACHED_CHARS = 4096
_cached_secret_kind = lru_cache(maxsize=256)(_secret_kind)


@lru_cache(maxsize=_BASE64_DEPTH + 1)
def _finders(depth: int) -> tuple[Callable[[str], list[_Edit]], ...]:
    """What finds the secrets at `depth` (0: the text; 1 and on: base64 inside it)."""
    finders: list[Callable[[str], list[_Edit]]] = [partial(_edits, rule) for rule in _RULES]
    if depth < _BASE64_DEPTH:
        finders.append(partial(_base64_edits, depth=depth))
    return tuple(finders)


@dataclass(slots=True)
class _Mark:
    """A marker in the working text, and the span of the read text it replaced."""

    start: int
    end: int
    read_start: int
    read_end: int
    marker: str


def _redact_read(reading: Reading, text: str, depth: int) -> Redaction:
    """Redact `reading.text`, replacing each secret's whole span in `text` it was read from.

    Rules run one after another on the read text, each on the previous one's output; `marks`
    records, for each marker in that output, the span of the read text it replaced.
    """
    work = reading.text
    marks: list[_Mark] = []  # in order
    for find in _finders(depth):
        edits = find(work)
        for start, end, marker in reversed(edits):
            low, high = _read_span(marks, start, end)
            marks = [mark for mark in marks if not start <= mark.start < end]  # swallowed
            shift = len(marker) - (end - start)
            for mark in marks:
                if mark.start >= end:
                    mark.start += shift
                    mark.end += shift
            new = _Mark(start, start + len(marker), low, high, marker)
            bisect.insort(marks, new, key=lambda mark: mark.start)
        if edits:
            work = _replaced(work, edits)
    pieces: list[str] = []
    position = 0
    for mark in marks:
        start, end = reading.original(mark.read_start, mark.read_end)
        pieces += (text[position:start], mark.marker)
        position = max(position, end)
    pieces.append(text[position:])
    return Redaction(text="".join(pieces), count=len(marks))


def _read_span(marks: list[_Mark], start: int, end: int) -> tuple[int, int]:
    """The span of the read text that `work[start:end]` stands for."""

    def position(i: int, first: bool) -> int:
        before = None
        for mark in marks:
            if mark.start <= i < mark.end:
                return mark.read_start if first else mark.read_end
            if mark.end <= i:
                before = mark
        read = i if before is None else before.read_end + i - before.end
        return read if first else read + 1

    return position(start, True), position(end - 1, False)


def _redact(text: str, depth: int) -> Redaction:
    reading = readable(text, _WRAPPED, _is_whole_token)
    if reading.maps or reading.text != text:
        return _redact_read(reading, text, depth)
    count = 0
    for find in _finders(depth):
        if edits := find(text):
            text = _replaced(text, edits)
            count += len(edits)
    return Redaction(text=text, count=count)


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` by ``[REDACTED:<kind>]``.

    Keys, URL shapes and the ``Bearer`` keyword are kept; only the secret part
    is replaced. Running it on its own output changes nothing.
    """
    return _redact(text, 0)
