"""The service's entry points: REST, OpenAPI, MCP, hook routes, HTTP guards."""
