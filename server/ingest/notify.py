"""Tell a running server that a batch job wrote memories, so it drops its read cache."""

from __future__ import annotations

import logging
import urllib.error
import urllib.request

from server.config import Settings

logger = logging.getLogger(__name__)


def notify_server(settings: Settings, timeout: float = 2.0) -> bool:
    """POST /cache/invalidate on the configured host and port; False if nobody answered.

    No server running is normal (the next start reads fresh data), so failure is only logged.
    """
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    if ":" in host:
        host = f"[{host}]"
    url = f"http://{host}:{settings.port}/cache/invalidate"
    headers = {}
    if settings.claude_memory_token is not None:
        headers["Authorization"] = f"Bearer {settings.claude_memory_token.reveal()}"
    request = urllib.request.Request(url, method="POST", data=b"", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError) as exc:
        logger.debug("no server to notify at %s: %s", url, exc)
        return False
