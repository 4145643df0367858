"""Errors meant for the caller: their messages say what went wrong and what to do next.

`ServiceError` subclasses come out of MemoryService; MCP tools turn them into `ToolError`s and
REST routes into `{"error": {"code", "message"}}` with the class's HTTP status, in one place each.
`StartupError` subclasses stop a command with one line and exit code 1, never a traceback.
"""


class ServiceError(Exception):
    """A request the service refused; `message` is shown to the caller as is."""

    code = "error"
    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(ServiceError):
    """The caller sent something unusable: empty content, a bad date, a limit out of range."""

    code = "invalid_input"
    status = 400


class NotFound(ServiceError):
    """No memory (or other object) with that id."""

    code = "not_found"
    status = 404


class Forbidden(ServiceError):
    """The caller may read this but not change it: a teammate's shared memory."""

    code = "forbidden"
    status = 403


class Conflict(ServiceError):
    """The request contradicts the current state: purge before delete, a duplicate on update."""

    code = "conflict"
    status = 409


class Unavailable(ServiceError):
    """The database cannot be reached right now; the request can be retried."""

    code = "unavailable"
    status = 503


class EmbeddingUnavailable(Unavailable):
    """The embeddings endpoint cannot answer: unreachable, overloaded, or without the model.

    Writes store the memory without its vector and a background task embeds it later; reads
    that need a vector (semantic search) report it.
    """

    code = "embeddings_unavailable"


class StartupError(Exception):
    """The process cannot start or a command cannot run; the message is the whole story."""


class ConfigError(StartupError):
    """A configuration value is unusable; the message names the variable."""


class DatabaseSetupError(StartupError):
    """The database cannot be started, reached or prepared."""


class EmbeddingModelMismatch(StartupError):
    """The stored vectors were made with another model than the configured one."""
