"""Request and response shapes for every way in: REST routes, MCP tools and hook calls.

Each area (memories, search, learning, sessions, hooks) declares its shapes once, with the
limits and defaults as field constraints. The REST adapter parses bodies and query strings
into these models, the MCP tools take the same fields as their parameters, and the OpenAPI
document is derived from them, so a field, default or limit is written in one place.
"""
