"""A team's server for the attack tests (#34): alice and bob in project acme, carol in project
other, dave with no project list (every project), each with their own token, over the real app.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from fastmcp import Client

from server.app import create_app
from server.core.config import Settings
from server.service.memory import MemoryService
from tests.db_fixtures import serving

PROJECTS: dict[str, list[str]] = {
    "alice": ["acme"],
    "bob": ["acme"],
    "carol": ["other"],
    "dave": [],  # no project list: every project
}


@dataclass
class Team:
    url: str
    tokens: dict[str, str]
    service: MemoryService

    @asynccontextmanager
    async def http(self, name: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
        """A REST client with `name`'s token (none: an anonymous one)."""
        headers = {"authorization": f"Bearer {self.tokens[name]}"} if name else {}
        async with httpx.AsyncClient(base_url=self.url, headers=headers, timeout=60) as client:
            yield client

    @asynccontextmanager
    async def mcp(self, name: str) -> AsyncIterator[Client[Any]]:
        """An MCP client over streamable HTTP (/mcp) with `name`'s token."""
        async with Client(f"{self.url}/mcp", auth=self.tokens[name], timeout=60) as client:
            yield client


@asynccontextmanager
async def team(service: MemoryService, settings: Settings) -> AsyncIterator[Team]:
    """The four users added to `service`'s database and the app served for them."""
    tokens = {}
    for name, projects in PROJECTS.items():
        added, _ = await service.users.add(name, projects)
        tokens[name] = added.token
    async with serving(create_app(settings, service)) as url:
        yield Team(url, tokens, service)
