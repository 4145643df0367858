"""A decision and its near-copy (the same sentence, three words changed): the write guard
must take them for the same memory (tests/integration/test_service_save.py and
test_service_lifecycle.py)."""

DECISION = (
    "We decided to use cursor-based pagination for the orders API because offset pagination "
    "skipped rows under concurrent inserts."
)
NEAR_COPY = (
    "We decided to use cursor based pagination for the orders API since offset pagination "
    "skipped rows during concurrent inserts."
)
