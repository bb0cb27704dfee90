"""The CUDA source is found by an editable install and by a built wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from eyelike._backends.cupy import kernel_path

REPO = Path(__file__).resolve().parents[2]


def test_found_from_this_install() -> None:
    path = kernel_path()
    assert path.read_text(encoding="utf-8") == (REPO / "kernels" / "eye.cuh").read_text(
        encoding="utf-8"
    )


@pytest.mark.slow
def test_found_inside_a_built_wheel(tmp_path: Path) -> None:
    try:
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
             "-w", str(tmp_path / "dist"), str(REPO)],
            check=True,
            capture_output=True,
            timeout=300,
        )  # fmt: skip
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"building the wheel failed: {exc}")
    (wheel,) = (tmp_path / "dist").glob("eyelike-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert "eyelike/kernels/eye.cuh" in zf.namelist()
        zf.extractall(tmp_path / "site")
    # Import from the unpacked wheel only: not from the source tree.
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run(
        [sys.executable, "-I", "-c",
         "import sys; sys.path.insert(0, sys.argv[1]);"
         "from eyelike._backends.cupy import kernel_path; print(kernel_path())",
         str(tmp_path / "site")],
        capture_output=True, text=True, check=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    found = Path(done.stdout.strip())
    assert found.is_relative_to(tmp_path / "site"), found
    assert found.read_bytes() == (REPO / "kernels" / "eye.cuh").read_bytes()
