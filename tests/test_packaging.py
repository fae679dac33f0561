"""What a new user meets first: the package index page, the licence, the project's links."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_readme_images_are_absolute_urls_of_files_in_this_repository() -> None:
    """The package index shows the README without the repository: relative links break."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme)
    assert images
    source = PROJECT["urls"]["Source"].removeprefix("https://github.com/")
    raw = f"https://raw.githubusercontent.com/{source}/main/"
    for url in images:
        assert url.startswith(raw), url
        assert (ROOT / url.removeprefix(raw)).is_file(), url


def test_the_licence_is_declared_and_shipped() -> None:
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")


def test_project_urls_point_to_the_repository() -> None:
    urls = PROJECT["urls"]
    assert set(urls) >= {"Homepage", "Source", "Issues", "Documentation"}
    assert all(url.startswith(urls["Source"]) for url in urls.values())
