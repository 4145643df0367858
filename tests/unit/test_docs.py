"""The README and the docs site's limits (issue #56). `mkdocs build --strict` in scripts/test.sh
checks every link inside docs/; the README is outside the site, so its links are checked here."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_readme_links_point_at_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    local = [t for t in LINK.findall(readme) if not t.startswith(("http://", "https://", "#"))]

    missing = [t for t in local if not (ROOT / t.split("#")[0]).exists()]

    assert local != []
    assert missing == []


def test_readme_and_architecture_stay_short() -> None:
    readme = (ROOT / "README.md").read_text().splitlines()
    architecture = (ROOT / "docs" / "ARCHITECTURE.md").read_text().splitlines()

    assert len(readme) <= 300
    assert len(architecture) <= 400


def test_benchmarks_opens_with_the_current_tables() -> None:
    benchmarks = (ROOT / "docs" / "BENCHMARKS.md").read_text()
    first_section = benchmarks.split("\n## ", 2)[1]

    assert first_section.startswith("Current figures")
    assert "| bench | command |" in first_section
    assert "benchmarks-history.md" in benchmarks


def build_site(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )


def test_a_broken_link_or_anchor_fails_the_docs_build(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    assert build_site(copy, tmp_path / "site").returncode == 0

    with (copy / "docs" / "commands.md").open("a") as page:
        page.write("\nSee [nowhere](nowhere.md) and [a missing part](install.md#no-such-part).\n")
    broken = build_site(copy, tmp_path / "site-broken")

    assert broken.returncode != 0
    assert "nowhere.md" in broken.stderr
    assert "#no-such-part" in broken.stderr
