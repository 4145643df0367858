"""The project rule as code holding a project in hand applies it (server/domain/project_rule.py)."""

from __future__ import annotations

import pytest

from server.domain.project_rule import names_project


@pytest.mark.parametrize(
    ("wanted", "named"),
    [
        ("shop", True),
        ("SHOP", True),
        ("/home/dev/Shop", True),
        ("/home/dev/shop/", True),
        ("/home/dev/shop/src/api", True),
        ("/home/dev/shopkeeper", False),
        ("/home/dev", False),
        ("shop-web", False),
        ("  ", False),
    ],
)
def test_a_project_is_named_by_its_name_its_folder_or_a_folder_inside(
    wanted: str, named: bool
) -> None:
    assert names_project(wanted, "shop", "/home/dev/Shop") is named


def test_a_project_without_a_folder_is_named_by_its_name_alone() -> None:
    assert names_project("notes", "notes", "")
    assert not names_project("/", "notes", "")
