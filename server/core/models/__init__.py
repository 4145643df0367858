"""Value types shared by the store, the service and the adapters, one module per area.

Frozen dataclasses: rows come out of the store as these, the service returns them, and the
adapters turn them into JSON with `output.to_json()` (numbers stay numbers, times are ISO 8601
UTC). Import each from its module: `from server.core.models.memories import Memory`.
"""
