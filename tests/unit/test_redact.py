"""Tests for server.core.redact: secrets are replaced, look-alikes are left alone.

All secret values are fake: built from repeated characters so they match the
providers' formats without being real credentials.
"""

import base64
import dataclasses
import hashlib

import pytest

from server.core.redact import Redaction, redact

# --- fake secrets -------------------------------------------------------------

AWS_ACCESS_KEY = "AKIA" + "Z2Y3" * 4
AWS_SESSION_KEY = "ASIA" + "Q7W8" * 4
AWS_SECRET_KEY = "aB3+" * 9 + "cD4/"
GITHUB_PAT = "ghp_" + "a1B2" * 9
GITHUB_OAUTH = "gho_" + "c3D4" * 9
GITHUB_SERVER = "ghs_" + "e5F6" * 10
GITHUB_FINE_GRAINED = "github_pat_" + "11AAAA2BB" * 2 + "0_" + "a1B2c3" * 10
GITLAB_PAT = "glpat-" + "a1B2c3D4e5" * 2
SLACK_BOT = "xoxb-1234567890-1234567890123-" + "a1B2" * 6
SLACK_USER = "xoxp-1234567890-1234567890-1234567890123-" + "ab12" * 8
SLACK_WEBHOOK_PATH = "T0ABC1234/B0ABC5678/" + "a1B2" * 6
STRIPE_LIVE = "sk_live_" + "a1B2" * 6
STRIPE_TEST = "sk_test_" + "c3D4" * 6
STRIPE_RESTRICTED = "rk_live_" + "e5F6" * 6
STRIPE_PUBLISHABLE = "pk_live_" + "g7H8" * 6
OPENAI_LEGACY = "sk-" + "a1B2" * 12
OPENAI_PROJECT = "sk-proj-" + "a1B2_c3D-" * 10 + "xY9"
ANTHROPIC = "sk-ant-api03-" + "a1B2-c3D_" * 10 + "AA"
GOOGLE = "AIza" + "Sy" + "a1B2" * 8 + "x"
NPM = "npm_" + "a1B2" * 9
HUGGING_FACE = "hf_" + "aBcD" * 8
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "a1B2_c3D-" * 4
BEARER = "a1B2c3" * 5
BASIC = "dXNlcjpodW50ZXIy"
SENDGRID = "SG." + "a1B2c3D4e5" * 2 + "f6" + "." + "Zx9Yw8Vu7T" * 4 + "s6R"
PYPI = "pypi-AgEIcHlwaS5vcmc" + "a1B2c3D4" * 8
TWILIO = "SK" + "0a1b2c3d" * 4
MAILGUN = "key-" + "0a1b2c3d" * 4
SHOPIFY = "shpat_" + "0a1b2c3d" * 4
DIGITALOCEAN = "dop_v1_" + "0a1b2c3d" * 8
VAULT = "hvs." + "a1B2c3D4e5" * 3
DOPPLER = "dp.pt." + "a1B2c3D4e5" * 4
DATABRICKS = "dapi" + "0a1b2c3d" * 4
GRAFANA = "glsa_" + "a1B2c3D4" * 4 + "_0a1b2c3d"
LINEAR = "lin_api_" + "a1B2c3D4e5" * 4
POSTMAN = "PMAK-" + "0a1b2c3d" * 3 + "-" + "0a1b2c3d" * 4 + "ef"
NEW_RELIC = "NRAK-" + "A1B2C3D4E5F6G7H8I9J0K1L2M3N"
AGE = "AGE-SECRET-KEY-1" + "QW3RT5YU7IO9PA1SD3FG5HJ7KL9ZX1CV3BN5MQW3RT5YU7IO9PA1SD3FG5"
TELEGRAM = "1234567890:AA" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q"
SESSION = "s%3Aq1W2e3R4t5Y6u7I8o9P0.a1B2c3D4e5F6g7H8"

# --- secret cases ---------------------------------------------------------------
# (id, template, secret, kind): "<S>" in the template marks where the secret goes.
# The expected output is the template with "<S>" replaced by the marker, which
# checks that everything around the secret is left intact.

SECRET_CASES: list[tuple[str, str, str, str]] = [
    ("aws-access-key", "the key <S> was in the log", AWS_ACCESS_KEY, "aws-access-key"),
    ("aws-session-key", "export AWS_ACCESS_KEY_ID=<S> now", AWS_SESSION_KEY, "aws-access-key"),
    (
        "aws-secret-ini",
        "[default]\naws_secret_access_key = <S>\nregion = eu-west-1",
        AWS_SECRET_KEY,
        "aws-secret-key",
    ),
    ("aws-secret-env", "AWS_SECRET_ACCESS_KEY=<S> ./deploy.sh", AWS_SECRET_KEY, "aws-secret-key"),
    ("aws-secret-json", '{"SecretAccessKey": "<S>"}', AWS_SECRET_KEY, "aws-secret-key"),
    ("github-ghp", "I pushed with <S> yesterday", GITHUB_PAT, "github-token"),
    ("github-gho", "oauth token <S>, scopes repo", GITHUB_OAUTH, "github-token"),
    ("github-ghs-longer", "app token <S> expired", GITHUB_SERVER, "github-token"),
    ("github-fine-grained", "use <S> for the API", GITHUB_FINE_GRAINED, "github-token"),
    ("github-in-url", "git clone https://<S>@github.com/org/repo.git", GITHUB_PAT, "github-token"),
    ("gitlab", "CI_TOKEN is <S> for now", GITLAB_PAT, "gitlab-token"),
    ("slack-bot", "the bot uses <S> to post", SLACK_BOT, "slack-token"),
    ("slack-user", "user token <S>.", SLACK_USER, "slack-token"),
    (
        "slack-webhook",
        "post to https://hooks.slack.com/services/<S> on failure",
        SLACK_WEBHOOK_PATH,
        "slack-webhook",
    ),
    ("stripe-live", "charge with <S> in prod", STRIPE_LIVE, "stripe-key"),
    ("stripe-test", "STRIPE_KEY=<S>", STRIPE_TEST, "stripe-key"),
    ("stripe-restricted", "restricted key <S> works", STRIPE_RESTRICTED, "stripe-key"),
    ("stripe-publishable", "frontend gets <S> only", STRIPE_PUBLISHABLE, "stripe-key"),
    ("openai-legacy", "my key <S> hit the rate limit", OPENAI_LEGACY, "openai-key"),
    ("openai-project", "OPENAI_API_KEY=<S>", OPENAI_PROJECT, "openai-key"),
    ("anthropic", "client = Anthropic(api_key='<S>')", ANTHROPIC, "anthropic-key"),
    ("google", "maps key <S> restricted to referrers", GOOGLE, "google-api-key"),
    ("npm", "//registry.npmjs.org/:_authToken=<S>", NPM, "npm-token"),
    ("huggingface", "huggingface-cli login --token <S> now", HUGGING_FACE, "huggingface-token"),
    ("jwt", "the cookie was <S> and it decoded fine", JWT, "jwt"),
    ("jwt-bearer", "Authorization: Bearer <S>", JWT, "jwt"),
    ("bearer-header", "curl -H 'Authorization: Bearer <S>' https://x.io", BEARER, "bearer-token"),
    ("bearer-text", "then send bearer <S> with it", BEARER, "bearer-token"),
    ("basic-auth", 'curl -H "Authorization: Basic <S>" https://example.com', BASIC, "basic-auth"),
    # key = value assignments: the key stays, the value goes.
    ("password-env", "password=<S>", "hunter2", "password"),
    ("password-prefixed", "DB_PASSWORD=<S> docker compose up", "Tr0ub4dor!3", "password"),
    ("password-yaml", "db:\n  user: app\n  password: <S>\n  host: db", "s3cr3t-Pa55", "password"),
    ("password-json", '{"user": "app", "password": "<S>"}', "correct horse battery", "password"),
    ("password-python", "conn = connect(user='app', password='<S>')", "hunter2", "password"),
    ("password-spaced-quoted", "password = '<S>' # TODO move to vault", "pa55word!", "password"),
    ("password-php", '$password = "<S>";', "hunter2", "password"),
    ("password-ini", "[db]\npassword = <S>\nport = 5432", "hunter2", "password"),
    ("password-walrus", "PASSWORD := <S>", "hunter2", "password"),
    ("password-odbc", "Server=db;Uid=sa;Pwd=<S>;Encrypt=yes", "Secret123", "password"),
    ("passwd", "passwd: <S>", "letmein42", "password"),
    ("passphrase", 'SSH_PASSPHRASE="<S>"', "open sesame 7", "password"),
    ("password-sentence", "I changed the password: <S>", "hunter2", "password"),
    ("password-query", "GET /login?user=bob&password=<S>&next=/", "hunter2", "password"),
    ("secret-env", "SECRET=<S>", "abc123def456", "secret"),
    ("secret-key-django", "SECRET_KEY = '<S>'", "django-insecure-abc123", "secret"),
    ("client-secret", '{"client_id": "app", "client_secret": "<S>"}', "0a1b2c3d4e5f", "secret"),
    ("token-yaml", "token: <S>", "abcdef123456", "secret"),
    (
        "oauth-query",
        "GET /authorize?oauth_token=<S>&oauth_verifier=x",
        "hh5s93j4hdidpola",
        "secret",
    ),
    ("access-token", "access_token=<S>&expires_in=3600", "ya29.a0AfB_xyz123", "secret"),
    ("auth-token", "AUTH_TOKEN='<S>'", "tok_123456", "secret"),
    ("api-key-prefixed", "MY_API_KEY=<S>", "key-0123456789", "secret"),
    ("apikey-camel", "const cfg = { apiKey: '<S>' }", "AbC123xYz", "secret"),
    ("apikey", "apikey=<S>", "0123456789abcdef", "secret"),
    ("api-key-header", "X-API-Key: <S>", "abcdef0123456789", "secret"),
    ("private-key-json", '"private_key": "<S>"', "abc123def", "secret"),
    # connection strings: user and host stay, the password goes.
    ("postgresql", "DATABASE_URL=postgresql://app:<S>@db:5432/x", "s3cr3t", "password"),
    ("postgres", "connect to postgres://app:<S>@localhost/app please", "s3cr3t", "password"),
    ("mysql", "mysql://root:<S>@127.0.0.1:3306/shop", "r00t!pw", "password"),
    ("mongodb-srv", "mongodb+srv://admin:<S>@cluster0.abcde.mongodb.net/t", "m0ng0", "password"),
    ("mongodb", "mongodb://admin:<S>@mongo:27017", "m0ng0pw", "password"),
    ("redis-no-user", "REDIS_URL=redis://:<S>@cache:6379/0", "r3d1s", "password"),
    ("amqp", "broker amqp://guest:<S>@rabbit:5672// is down", "gu3st!", "password"),
    ("https", "fetch https://bob:<S>@intranet.example.com/report", "hunter2", "password"),
    ("ftp", "ftp://anon:<S>@files.example.com/pub", "ftp-pw-1", "password"),
    ("url-at-in-password", "postgres://app:<S>@db/x", "p@ss", "password"),
    # the secret word as one part of a longer key name (#54)
    ("db-pass", "DB_PASS=<S>", "Xk9vQ2mLp7", "password"),
    ("db-pass-export", "export DB_PASS='<S>'", "Xk9vQ2mLp7", "password"),
    ("camel-pass", "const dbPass = '<S>';", "Cm3lP4sS9x", "password"),
    ("redis-pass-yaml", "redis:\n  redis_pass: <S>\n", "Rd5pW8qZ1t", "password"),
    ("secret-key-base", "SECRET_KEY_BASE=<S>", "9f8e7d6c5b4a" * 8, "secret"),
    ("secret-key-base-yaml", "production:\n  secret_key_base: <S>\n", "9f8e7d6c5b4a" * 8, "secret"),
    ("secret-in-toml-name", 'jwt_secret_value = "<S>"', "Jw7sK2vN5qX8", "secret"),
    ("token-in-json-name", '{"refresh_token_value": "<S>"}', "Rf7tK2vN5qX8", "secret"),
    ("credentials", "GOOGLE_CREDENTIALS=<S>", "Gc8rD3nT5lS9aZ", "secret"),
    ("docker-config-auth", '{"auth": "<S>"}', "dXNlcjpHaDdwUXc5eg==", "secret"),
    ("npm-auth", "NPM_AUTH=<S>", "Np4mA7uT2hX9", "secret"),
    # HTTP headers
    ("cookie", "Cookie: connect.sid=<S>; theme=dark", SESSION, "cookie"),
    ("set-cookie", "Set-Cookie: sessionid=<S>; Path=/; HttpOnly; SameSite=Lax", SESSION, "cookie"),
    ("set-cookie-json", '{"set-cookie": "_app_session=<S>; path=/"}', SESSION, "cookie"),
    ("curl-cookie", "curl --cookie 'sid=<S>' https://x.test", SESSION, "cookie"),
    ("authorization-token", "Authorization: Token <S>", "9c8b7a6d5e4f3a2b1c0d", "authorization"),
    ("authorization-bare", '"Authorization": "<S>"', "Ap1K3yQ9wE7rT5yU3iO1", "authorization"),
    # credentials on command lines
    ("curl-u", "curl -u admin:<S> https://x.test", "Cu7lP4ss9", "password"),
    ("curl-user-quoted", "curl --user 'deploy:<S>' https://x.test", "Dp3lOy7pW", "password"),
    ("mysql-p", "mysql -u root -p<S> shop", "My5qlPw8", "password"),
    ("mysqldump-p-quoted", "mysqldump -uroot -p'<S>' shop", "Dm9pQ!x2", "password"),
    ("docker-login-p", "docker login -u bot -p <S> ghcr.io", "Dk4rLg9nPw", "password"),
    ("docker-login-password", "docker login --password <S> ghcr.io", "Dk4rLg9nPw", "password"),
    ("sshpass", "sshpass -p '<S>' ssh deploy@host", "Ss7hP4ss", "password"),
    ("redis-cli", "redis-cli -h cache -a <S> ping", "Rc8lIp4w", "password"),
    ("password-option", "vault login --password <S>", "Va7uLt3pw", "secret"),
    ("token-option", "gh auth login --token <S>", "Gh8tK3nQ2w", "secret"),
    # provider keys
    ("sendgrid", "mailer key <S> works", SENDGRID, "sendgrid-key"),
    ("pypi", "twine upload -p <S>", PYPI, "pypi-token"),
    ("twilio", "twilio key <S> works", TWILIO, "twilio-key"),
    ("mailgun", "mailgun <S>", MAILGUN, "mailgun-key"),
    ("shopify", "store token <S>", SHOPIFY, "shopify-token"),
    ("digitalocean", "doctl with <S>", DIGITALOCEAN, "digitalocean-token"),
    ("vault", "vault token <S>", VAULT, "vault-token"),
    ("doppler", "doppler <S> for prod", DOPPLER, "doppler-token"),
    ("databricks", "job token <S>", DATABRICKS, "databricks-token"),
    ("grafana", "grafana sa <S>", GRAFANA, "grafana-token"),
    ("linear", "linear <S>", LINEAR, "linear-key"),
    ("postman", "postman <S>", POSTMAN, "postman-key"),
    ("newrelic", "new relic <S>", NEW_RELIC, "newrelic-key"),
    ("age", "age identity <S>", AGE, "age-secret-key"),
    ("telegram", "bot <S> posts", TELEGRAM, "telegram-bot-token"),
]


@pytest.mark.parametrize(
    ("template", "secret", "kind"),
    [pytest.param(t, s, k, id=i) for i, t, s, k in SECRET_CASES],
)
def test_secret_is_redacted(template: str, secret: str, kind: str) -> None:
    text = template.replace("<S>", secret)
    marker = f"[REDACTED:{kind}]"

    result = redact(text)

    assert secret not in result.text
    assert marker in result.text
    assert result.text == template.replace("<S>", marker)
    assert result.count == template.count("<S>")


# --- look-alikes ------------------------------------------------------------------

LOOK_ALIKES: list[tuple[str, str]] = [
    ("prose-password-field", "the password field must be validated"),
    ("prose-token-expiry", "set token expiry to 30 minutes"),
    ("prose-password-colon", "Password: must be at least 8 characters long"),
    ("prose-status", "Token: valid\nSecret: missing\nPassword: required"),
    ("empty-value", "password="),
    ("empty-quoted", 'password = ""'),
    ("angle-placeholder", "password=<your-password>"),
    ("braced-env", "password=${DB_PASSWORD}"),
    ("env-var", "password=$PASSWORD"),
    ("command-subst", "TOKEN=$(cat /run/secrets/token)"),
    ("masked", "password=***"),
    ("ellipsis", "api_key=..."),
    ("template", 'password: "{{ vault_db_password }}"'),
    ("your-placeholder", "OPENAI_API_KEY=your_api_key_here"),
    ("none", "token=None"),
    ("type-hint-python", "    password: str\n    token: str | None = None"),
    ("type-hint-ts", "interface Creds { apiKey: string; token: string }"),
    ("kwarg-variable", "client = Client(api_key=api_key, token=self.token)"),
    ("settings-reference", "password=settings.DB_PASSWORD"),
    ("function-call", "token = get_token()\npassword=os.environ['DB_PASSWORD']"),
    ("max-tokens", "max_tokens=4096, token_count: 12, max_token=512"),
    ("pwd-env", "PWD=/home/dev/project\nOLDPWD=/home/dev"),
    ("comparison", 'if password == "":'),
    ("sklearn", "install sk-learn, I mean scikit-learn"),
    ("sk-slug", "see docs/sk-learn-compatible-estimators-guide"),
    ("task-id", "task-1234 and risk-5678 are done"),
    ("git-sha", "fixed in 3f786850e387550fdab836ed7e6dc881de23001b"),
    ("uuid", "request 123e4567-e89b-12d3-a456-426614174000 failed"),
    ("url-no-password", "postgresql://localhost:5432/db"),
    ("url-user-only", "https://user@github.com/x"),
    ("url-port-path", "http://localhost:8080/api/v1/users@me"),
    ("url-placeholder-password", "postgres://user:password@localhost/app"),
    ("url-env-password", "postgres://app:${DB_PASSWORD}@db/app"),
    ("scp-style-git", "git@github.com:org/repo.git"),
    ("file-path", "/home/dev/.config/secrets/token.json"),
    ("cli-flag", "pnpm install --frozen-lockfile"),
    ("error-code", "ERR_POOL_TIMEOUT after 30s"),
    ("bearer-prose", "use a Bearer token in the header"),
    ("bearer-placeholder", "Authorization: Bearer <token>"),
    ("bearer-env", "Authorization: Bearer $API_TOKEN"),
    ("bearer-upper-placeholder", "Authorization: Bearer YOUR_TOKEN"),
    ("basic-prose", "Authorization: Basic authentication is deprecated"),
    ("base64-not-jwt", "the blob is SGVsbG8gd29ybGQhIFRoaXMgaXMgYmFzZTY0Lg=="),
    ("dotted-not-jwt", "version eyJ.1.2 and eyJhbGciOiJIUzI1NiJ9 alone"),
    ("public-key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0B\n-----END PUBLIC KEY-----"),
    ("certificate", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----"),
    ("slack-prefix-doc", "bot tokens start with xoxb- and user tokens with xoxp-"),
    ("slack-placeholder", "SLACK_BOT_TOKEN=xoxb-your-token"),
    ("stripe-doc", "keys look like sk_live_... or sk_test_..."),
    ("github-prefix-doc", "classic tokens start with ghp_ and fine-grained with github_pat_"),
    ("short-hf", "hf_hub_download(repo_id=x)"),
    ("aws-secret-placeholder", "aws_secret_access_key = YOUR_SECRET_KEY"),
    ("aws-not-key-shaped", "AKIA is the prefix; AKIAshort is not a key"),
    (
        "markdown",
        "## Secrets\n\n- **Password**: store it in the vault\n- `token` rotates daily\n\n"
        "| key | value |\n|---|---|\n| password | *(see 1Password)* |",
    ),
    # shapes seen when scanning real library code and docs
    ("pem-header-constant", '_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"'),
    ("type-annotation", "class User:\n    password: SecretStr\n    token: bool"),
    ("tuple-unpacking", "username, password = credentials"),
    ("negative-number", "last_non_pad_token = -1"),
    ("attribute-path", "self.text_pad_token = config.tts_text_pad_token_id"),
    ("kwarg-snake-name", "keyring.set_password(svc, username=combo_key, password=json_str)"),
    (
        "tokenizer-tags",
        'Tokenizer(pad_token="[PAD]", eos_token="</s>", unk_token="<unk>", bos_token="__start__")',
    ),
    (
        "quoted-names",
        '{"bos_token": "bos_token_id", "n_token": "vocab_size", "tiktoken": "tiktoken"}',
    ),
    ("quoted-prose-value", "'opaquelocktoken': 'RFC 2518',"),
    ("scheme-symbols", '"passwd:dir", "passwd:uid",'),
    ("camel-name-value", 'AttributeOID.CHALLENGE_PASSWORD: "challengePassword",'),
    ("header-name", 'ACCESS_TOKEN_HEADER = "X-Xet-Access-Token"'),
    ("mask-with-colon", 'password = ":****"'),
    ("code-block", "```python\ndef check(password: str) -> bool:\n    return bool(password)\n```"),
    # names and commands around the #54 rules
    ("password-hash-call", "password_hash = hash(password)"),
    ("get-token", "def get_token():\n    return session.token"),
    ("password-file-option", "mysql --password-file /run/secrets/db -h db shop"),
    ("password-stdin", "docker login --password-stdin ghcr.io < token.txt"),
    ("option-prose", "Use --password to pass it and --token for the CLI."),
    ("option-prefix", "a lesson on gh auth login --with-token ghp_ and --api-key sk-"),
    ("option-variable", "gh auth login --token $(cat ~/.token) --api-key $API_KEY"),
    ("describing-names", "TOKEN_COUNT=4096 PASSWORD_MIN_LENGTH=12 SECRET_NAME=prod-db-2"),
    ("describing-paths", "SECRET_KEY_FILE=/run/secrets/key2 TOKEN_URL=https://x.test/v2/token"),
    ("auth-words", "auth: true\nauthor: Ann\noauth_flow=pkce2"),
    ("pass-count", "PASS: 12\nFAIL: 0"),
    ("bypass-compass", "bypass: route-1 and compass: north"),
    ("cookie-prose", "The Cookie: header carries the session; see Set-Cookie."),
    ("cookie-words", "Cookie: theme=dark; lang=en"),
    ("authorization-prose", "Authorization: required for every route"),
    ("uid-gid", "docker run -u 1000:1000 --user 0:0 app"),
    (
        "short-options",
        "mkdir -pv build && cp -pr src dst && ssh -p 2222 host && git push -u origin",
    ),
    ("mysql-prompt", "mysql -u root -p shop"),
    ("curl-placeholder", "curl -u $USER:$PASS https://x.test"),
    ("printf-escapes", 'printf("%2d items, %5F unused", n)'),
    ("url-escapes", "https://x.test/a%20b/c%2Dd?q=%2Fetc"),
    ("emoji-joiners", "family \U0001f468\u200d\U0001f469\u200d\U0001f467 and soft\u00adhyphen"),
]


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in LOOK_ALIKES])
def test_look_alike_is_unchanged(text: str) -> None:
    result = redact(text)

    assert result.text == text
    assert result.count == 0


# --- idempotence --------------------------------------------------------------

SECRET_TEXTS = [pytest.param(t.replace("<S>", s), id=f"secret-{i}") for i, t, s, _ in SECRET_CASES]
LOOK_ALIKE_TEXTS = [pytest.param(t, id=f"look-alike-{i}") for i, t in LOOK_ALIKES]
ALL_TEXTS = SECRET_TEXTS + LOOK_ALIKE_TEXTS


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_redact_is_idempotent(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)

    assert twice.text == once.text
    assert twice.count == 0


# --- several secrets, private keys, edge cases ----------------------------------------


def test_multiple_secrets_are_each_counted() -> None:
    text = (
        f"token {GITHUB_PAT} and key {AWS_ACCESS_KEY}\n"
        "DB_PASSWORD=hunter2\n"
        "DATABASE_URL=postgres://app:s3cr3t@db/app\n"
        f'{{"token": "{GITHUB_OAUTH}"}}'
    )

    result = redact(text)

    assert result.count == 5
    for secret in (GITHUB_PAT, AWS_ACCESS_KEY, "hunter2", "s3cr3t", GITHUB_OAUTH):
        assert secret not in result.text
    assert result.text.count("[REDACTED:github-token]") == 2
    assert result.text.count("[REDACTED:password]") == 2
    assert "[REDACTED:aws-access-key]" in result.text
    assert '{"token": "[REDACTED:github-token]"}' in result.text


PEM_BODY = "\n".join(["MIIEowIBAAKCAQEA" + "a1B2c3D4" * 7] * 5 + ["q1w2e3r4t5y6=="])


@pytest.mark.parametrize(
    "label",
    [
        pytest.param("RSA PRIVATE KEY", id="rsa"),
        pytest.param("EC PRIVATE KEY", id="ec"),
        pytest.param("OPENSSH PRIVATE KEY", id="openssh"),
        pytest.param("ENCRYPTED PRIVATE KEY", id="encrypted"),
        pytest.param("PRIVATE KEY", id="pkcs8"),
        pytest.param("PGP PRIVATE KEY BLOCK", id="pgp"),
    ],
)
def test_private_key_block_is_one_marker(label: str) -> None:
    block = f"-----BEGIN {label}-----\n{PEM_BODY}\n-----END {label}-----"
    text = f"here is the key:\n{block}\nplease keep it safe"

    result = redact(text)

    assert result.text == "here is the key:\n[REDACTED:private-key]\nplease keep it safe"
    assert result.count == 1


def test_private_key_with_encryption_headers() -> None:
    block = (
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
        "DEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n\n"
        f"{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
    )

    result = redact(f"key: {block} end")

    assert result.text == "key: [REDACTED:private-key] end"
    assert result.count == 1


def test_private_key_escaped_in_json() -> None:
    escaped = PEM_BODY.replace("\n", "\\n")
    text = (
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + escaped
        + '\\n-----END PRIVATE KEY-----\\n", "client_email": "x@y.iam"}'
    )

    result = redact(text)

    assert "MIIEowIBAAKCAQEA" not in result.text
    assert '"private_key": "[REDACTED:private-key]\\n"' in result.text
    assert '"client_email": "x@y.iam"' in result.text
    assert result.count == 1


def test_truncated_private_key_is_still_redacted() -> None:
    text = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n\nthat's all I have"

    result = redact(text)

    assert result.text == "[REDACTED:private-key]\n\nthat's all I have"
    assert result.count == 1


ZWSP, SHY = "\u200b", "\u00ad"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            f"token {GITHUB_PAT[:10]}{ZWSP}{GITHUB_PAT[10:20]}{SHY}{GITHUB_PAT[20:]} leaked",
            "token [REDACTED:github-token] leaked",
            id="split-token",
        ),
        pytest.param(
            f"cb?t={GITHUB_PAT.replace('_', '%5F')}&x=1",
            "cb?t=[REDACTED:github-token]&x=1",
            id="escaped-underscore",
        ),
        pytest.param(
            f"key {OPENAI_PROJECT.replace('-', '%2d')}",
            "key [REDACTED:openai-key]",
            id="escaped-dash",
        ),
        pytest.param(
            f"DB_PA{ZWSP}SS=Zw5pQ8mL2k a{ZWSP}b",
            f"DB_PA{ZWSP}SS=[REDACTED:password] a{ZWSP}b",
            id="split-key-kept",
        ),
        pytest.param(
            f"\U0001f468\u200d\U0001f469 {ZWSP}{STRIPE_LIVE[:9]}{SHY}{STRIPE_LIVE[9:]} ok {SHY}",
            f"\U0001f468\u200d\U0001f469 {ZWSP}[REDACTED:stripe-key] ok {SHY}",
            id="rest-untouched",
        ),
    ],
)
def test_tokens_split_by_invisible_characters_or_escapes(text: str, expected: str) -> None:
    """The whole span of the token in the original text goes; all else stays as written."""
    result = redact(text)

    assert result.text == expected
    assert result.count == 1
    assert redact(result.text) == Redaction(text=result.text, count=0)


# --- tokens written so that no pattern sees them (#65) ---------------------------

FULL_WIDTH = {c: c + 0xFEE0 for c in range(0x21, 0x7F)}  # ASCII to its full-width form
FULL_WIDTH_AWS = AWS_ACCESS_KEY.translate(FULL_WIDTH)
GITHUB_BASE64 = base64.b64encode(GITHUB_PAT.encode()).decode()
CYRILLIC_ER = "\u0440"  # drawn like the Latin p
JWT_SPACED = JWT.replace(".", " . ")
AZURE_ALL_A = "A" * 86 + "=="

# (id, text, expected): each was stored as written before #65.
BYPASSES = [
    pytest.param(
        f"the CI key {FULL_WIDTH_AWS} again",
        "the CI key [REDACTED:aws-access-key] again",
        id="full-width-aws",
    ),
    pytest.param(
        f"auth blob {GITHUB_BASE64} from the config",
        "auth blob [REDACTED:github-token] from the config",
        id="base64-github",
    ),
    pytest.param(
        f"token {GITHUB_PAT[:20]}\n{GITHUB_PAT[20:]} (wrapped)\nnext line",
        "token [REDACTED:github-token] (wrapped)\nnext line",
        id="newline-split-github",
    ),
    pytest.param(
        '{"token": "ghp\\u005f' + GITHUB_PAT[4:] + '", "user": "ci\\u005fbot"}',
        '{"token": "[REDACTED:github-token]", "user": "ci\\u005fbot"}',
        id="json-escape-github",
    ),
    pytest.param(
        f"pushed with gh{CYRILLIC_ER}_{GITHUB_PAT[4:]} yesterday",
        "pushed with [REDACTED:github-token] yesterday",
        id="cyrillic-github",
    ),
    pytest.param(
        f"the cookie was {JWT_SPACED} and it decoded",
        "the cookie was [REDACTED:jwt] and it decoded",
        id="jwt-spaced-dots",
    ),
    pytest.param(
        "the sudo password is Tr0ub4dor&3",
        "the sudo password is [REDACTED:password]",
        id="password-is-phrase",
    ),
    pytest.param(
        f"AccountName=acme;AccountKey={AZURE_ALL_A};EndpointSuffix=core.windows.net",
        "AccountName=acme;AccountKey=[REDACTED:azure-key];EndpointSuffix=core.windows.net",
        id="azure-all-a",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BYPASSES)
def test_bypass_is_redacted_and_the_rest_kept_as_written(text: str, expected: str) -> None:
    result = redact(text)

    assert result.text == expected
    assert result.count == 1
    assert redact(result.text) == Redaction(text=result.text, count=0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            f"{'token:'.translate(FULL_WIDTH)}\u3000{GITHUB_PAT}\u3000\u3002",
            f"{'token:'.translate(FULL_WIDTH)}\u3000[REDACTED:github-token]\u3000\u3002",
            id="full-width-around",
        ),
        pytest.param(
            f"ключ {GITHUB_PAT.replace('a', chr(0x0430))} — не публиковать",
            "ключ [REDACTED:github-token] — не публиковать",
            id="cyrillic-a-throughout",
        ),
        pytest.param(
            f"wrapped at 76:\n  {GITHUB_PAT[:12]}\n  {GITHUB_PAT[12:30]}\n  {GITHUB_PAT[30:]}\nok",
            "wrapped at 76:\n  [REDACTED:github-token]\nok",
            id="three-lines",
        ),
        pytest.param(
            f"{GITHUB_PAT}\nnext line starts here",
            "[REDACTED:github-token]\nnext line starts here",
            id="whole-token-ends-its-line",
        ),
        pytest.param(
            "cfg " + base64.b64encode(f"password={BEARER}".encode()).decode() + " ok",
            "cfg [REDACTED:password] ok",
            id="base64-assignment",
        ),
        pytest.param(
            "nested " + base64.b64encode(GITHUB_BASE64.encode()).decode(),
            "nested [REDACTED:github-token]",
            id="base64-of-base64",
        ),
        pytest.param(
            "the password for the staging db is 'Xk9vQ2mLp7' until Friday",
            "the password for the staging db is '[REDACTED:password]' until Friday",
            id="password-for-phrase",
        ),
        pytest.param(
            "my passphrase was changed to correct-Horse-7!, then",
            "my passphrase was changed to [REDACTED:password]!, then",
            id="passphrase-changed-to",
        ),
    ],
)
def test_token_spellings_around_the_bypasses(text: str, expected: str) -> None:
    result = redact(text)

    assert result.text == expected
    assert redact(result.text).text == result.text


# Kinds whose rule matches a token on its own (a provider prefix, no context).
PREFIXED_KINDS = {
    "aws-access-key", "github-token", "gitlab-token", "slack-token", "stripe-key", "openai-key",
    "anthropic-key", "google-api-key", "npm-token", "huggingface-token", "jwt", "sendgrid-key",
    "pypi-token", "twilio-key", "mailgun-key", "shopify-token", "digitalocean-token",
    "vault-token", "doppler-token", "databricks-token", "grafana-token", "linear-key",
    "postman-key", "newrelic-key", "age-secret-key", "telegram-bot-token",
}  # fmt: skip


@pytest.mark.parametrize(
    ("template", "secret", "kind"),
    [pytest.param(t, s, k, id=i) for i, t, s, k in SECRET_CASES if k in PREFIXED_KINDS],
)
def test_every_prefixed_token_wrapped_onto_the_next_line_is_redacted(
    template: str, secret: str, kind: str
) -> None:
    cut = len(secret) // 2
    text = template.replace("<S>", f"{secret[:cut]}\n{secret[cut:]}")

    result = redact(text)

    assert result.text == template.replace("<S>", f"[REDACTED:{kind}]")


PNG = base64.b64encode(bytes(range(256)) * 3).decode()  # binary, as an inline image is
# Clean texts near the new reading: each is stored exactly as written.
CLEAN_NEAR_THE_BYPASSES = [
    ("git-sha", "Fixed in 4c1e9a7d2b3f5e6a7b8c9d0e1f2a3b4c5d6e7f80 on main."),
    ("sha256", f"sha256:{hashlib.sha256(b'acme').hexdigest()} is the image digest"),
    ("uuid", "Session 3f6c2a1e-8b4d-4c9e-a1f7-2d5e9b0c7a41 leaked the pool."),
    ("data-uri", f'<img src="data:image/png;base64,{PNG}">'),
    ("base64-prose", base64.b64encode(b"screenshots/login-page-2026-04-14.png").decode()),
    ("base64-cursor", "cursor=" + base64.b64encode(b'{"createdAt":"2026-04-15","id":88}').decode()),
    ("paths", "/home/dev/acme-api/src/routes/orders/pagination.test.ts:42 and C:\\Users\\dev"),
    ("russian", "Пароль лежит в хранилище; спросите у Олега. Токен тоже там."),  # noqa: RUF001
    ("chinese", "密码在保管库里，请看维基：第３节。"),  # noqa: RUF001
    ("greek", "Ο κωδικός είναι στο θησαυροφυλάκιο."),  # noqa: RUF001
    ("full-width-prose", f"{'ABC company,2026'.translate(FULL_WIDTH)}\u5e74"),
    ("nbsp", "password:\u00a0see the vault"),
    ("json-escapes", '{"name": "caf\\u00e9", "sep": "a\\u005fb", "quote": "\\u0022"}'),
    ("ligature", "the ﬁle ﬂag is set"),
    ("line-ends-with-prefix", "we use sk-\nlearn for that, and ghp_\nprefixes in docs"),
    ("wrapped-prose", "import sk-learn-contrib\nfrom the registry"),
    ("eyJ-word", "eyJhbGciOiJIUzI1NiJ9 is just the header"),
    ("phrase-required", "The password is required and the password is 12 characters long."),
    ("phrase-vault", "The password is in 1Password; the password was reset yesterday."),
    ("phrase-hash", "The password is SHA256-hashed, and the password is bcrypt."),
    ("phrase-variable", "the password is $DB_PASSWORD and the passcode is <your-pin>"),
    ("phrase-code", "the password is settings.DB_PASSWORD, the password is /run/secrets/db"),
    ("azure-name", "AccessKey=ThisIsJustAVeryLongConfigSettingName"),
]


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in CLEAN_NEAR_THE_BYPASSES])
def test_clean_text_near_the_bypasses_is_unchanged(text: str) -> None:
    assert redact(text) == Redaction(text=text, count=0)


def test_cookie_header_counts_each_value() -> None:
    result = redact(f"Cookie: a={SESSION}; b=Zx9Yw8Vu7Ts6; theme=dark")

    assert result.text == "Cookie: a=[REDACTED:cookie]; b=[REDACTED:cookie]; theme=dark"
    assert result.count == 2


def test_empty_string() -> None:
    assert redact("") == Redaction(text="", count=0)


def test_redaction_is_frozen() -> None:
    result = redact("password=hunter2")

    with pytest.raises(dataclasses.FrozenInstanceError):
        result.count = 0  # type: ignore[misc]
