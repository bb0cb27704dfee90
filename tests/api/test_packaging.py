"""What a user checks before depending on the package: the license, the
changelog, one version, the metadata, and a README that matches the code."""

from __future__ import annotations

import importlib.metadata
import inspect
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

import eyelike

REPO = Path(__file__).resolve().parents[2]


def _pyproject() -> dict[str, Any]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    with (REPO / "pyproject.toml").open("rb") as f:
        data: dict[str, Any] = tomllib.load(f)
    return data


def test_license_is_the_declared_bsd_3_clause() -> None:
    assert _pyproject()["project"]["license"] == "BSD-3-Clause"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("BSD 3-Clause License\n")
    assert "Copyright (c) " in text
    # The three clauses, and the disclaimer.
    for words in (
        "1. Redistributions of source code must retain",
        "2. Redistributions in binary form must reproduce",
        "3. Neither the name of the copyright holder",
        'THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"',
    ):
        assert words in text


def test_version_is_written_once() -> None:
    project = _pyproject()
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    path = project["tool"]["hatch"]["version"]["path"]
    source = (REPO / path).read_text(encoding="utf-8")
    assert re.search(
        rf'^__version__ = "{re.escape(eyelike.__version__)}"$', source, re.M
    )
    assert re.fullmatch(r"\d+\.\d+\.\d+([a-z]+\d+)?", eyelike.__version__)


def test_installed_metadata_has_the_version_and_urls() -> None:
    # An editable install's metadata is written when it is installed: a
    # failure here after a version bump means "reinstall".
    meta = importlib.metadata.metadata("eyelike")
    assert meta["Version"] == eyelike.__version__
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert set(urls) >= {"Source", "Issues", "Changelog"}
    assert all(u.startswith("https://") for u in urls.values())


def test_changelog_starts_at_the_current_version() -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n")
    assert "Keep a Changelog" in text
    versions = re.findall(r"^## \[?(\d+\.\d+\.\d+)\]?", text, re.M)
    assert versions, "no version section"
    assert versions[0] == eyelike.__version__
    assert re.search(r"^## \[?Unreleased\]?$", text, re.M)


def test_readme_signature_of_eye_is_complete() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^eyelike\.eye\((n_rows.*?)\)$", readme, re.M | re.S)
    assert found is not None
    written = [
        part.split("=")[0].strip()
        for part in found.group(1).split(",")
        if part.strip() not in ("/", "*")
    ]
    assert written == list(inspect.signature(eyelike.eye).parameters)


@pytest.mark.slow
def test_wheel_has_version_license_and_kernel(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps",
         "-q", "-w", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("eyelike-*.whl")
    assert wheel.name.startswith(f"eyelike-{eyelike.__version__}-")
    names = zipfile.ZipFile(wheel).namelist()
    assert "eyelike/kernels/eye.cuh" in names
    assert f"eyelike-{eyelike.__version__}.dist-info/licenses/LICENSE" in names
    # The benchmark is a development tool: no code of it in the wheel.
    assert not [n for n in names if "bench" in n.lower()], names
    assert all(n.startswith(("eyelike/", "eyelike-")) for n in names), names
