"""The project rule as code holding a project in hand applies it (server/domain/project_rule.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from server.core.models.memories import ProjectSummary
from server.domain.project_rule import folder_match, names_project, placed_projects, remote_names


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


def test_remote_names_are_the_repositories_a_git_config_points_at() -> None:
    config = (
        '[remote "origin"]\n\turl = git@github.com:acme/Shop-Frontend.git\n'
        '[remote "mirror"]\n\turl = https://gitlab.example/acme/shop-frontend/\n'
        '[remote "local"]\n\turl = ../billing-svc\n'
    )

    assert remote_names(config) == ["shop-frontend", "billing-svc"]


def test_a_folder_is_the_unplaced_project_its_name_or_else_its_remote_names() -> None:
    unplaced = ["Shop-Frontend", "billing-svc"]

    assert folder_match("/home/dev/shop-frontend/", ["billing-svc"], unplaced) == (
        "Shop-Frontend",
        "name",
    )
    assert folder_match("/home/dev/checkout", ["billing-svc"], unplaced) == (
        "billing-svc",
        "remote",
    )
    assert folder_match("/home/dev/checkout", [], unplaced) is None


def test_a_projects_memories_without_a_folder_are_listed_with_its_folder() -> None:
    at = datetime(2026, 11, 29, tzinfo=UTC)
    summaries = [
        ProjectSummary("shop", "", 2, at),
        ProjectSummary("shop", "/home/dev/shop", 3, at - timedelta(days=1)),
        ProjectSummary("named", "", 1, at - timedelta(days=2)),
        ProjectSummary("", "", 4, at - timedelta(days=3)),
    ]

    listed = placed_projects(summaries, [("named", "/home/dev/named")])

    assert [(p.project, p.project_path, p.count, p.last_at) for p in listed] == [
        ("shop", "/home/dev/shop", 5, at),
        ("named", "/home/dev/named", 1, at - timedelta(days=2)),
        ("", "", 4, at - timedelta(days=3)),
    ]
