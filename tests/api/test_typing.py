"""The public types as a user's ``mypy --strict`` sees them where torch and
JAX are installed (the ``lint`` session checks the same file without them):
``typing_returns.py`` must pass, and a probe must show that the check sees
the libraries' real types and can fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import eyelike

pytest.importorskip("mypy", reason="mypy is in the newest pinned set only")
pytest.importorskip("torch")
pytest.importorskip("jax")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# If torch or JAX were Any to mypy (no type information found), every
# assert_type about them would pass; the probe's notes show they are not,
# and its wrong assert_type that mypy does report errors here.
PROBE = """\
from typing import assert_type, reveal_type

import jax
import jax.numpy as jnp
import torch

from eyelike import eye

reveal_type(eye(3, xp=torch))
reveal_type(eye(3, xp=jnp))
assert_type(eye(3, xp=torch), jax.Array)
"""


@pytest.mark.slow
def test_the_user_file_passes_mypy_strict_with_torch_and_jax(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    probe = tmp_path / "typing_probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    cache = getattr(pytestconfig, "cache", None)  # (None under -p no:cacheprovider)
    env = dict(os.environ)
    # The eyelike under test, where this checkout's src is imported (mypy
    # reads no PYTHONPATH, and an installed one may be another checkout's).
    src = Path(eyelike.__file__).resolve().parents[1]
    if src == ROOT / "src":
        env["MYPYPATH"] = str(src)
    command = [
        *(sys.executable, "-m", "mypy", "--strict"),
        # The user's view: errors in what the checked files import (eyelike,
        # torch, ...) are not theirs, and not reported.
        "--follow-imports=silent",
        *("--config-file", str(ROOT / "pyproject.toml")),
        # (A cache of its own: analysing torch takes most of a minute.)
        *("--cache-dir", str(cache.mkdir("mypy") if cache else tmp_path / "cache")),
        *("--no-error-summary", "--hide-error-context"),
        *(str(HERE / "typing_returns.py"), str(probe)),
    ]
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout + result.stderr
    # typing_returns.py: nothing; the probe: the real types, and its error.
    # (Its path is not compared: from its cache mypy may name the probe's
    # file of an earlier run, the same text in another tmp_path.)
    assert [line.partition(":")[2] for line in lines] == [
        '9: note: Revealed type is "torch._tensor.Tensor"',
        '10: note: Revealed type is "jax._src.basearray.Array"',
        '11: error: Expression is of type "Tensor", not "Array"  [assert-type]',
    ], result.stdout + result.stderr
    assert all("typing_probe.py:" in line for line in lines), result.stdout
