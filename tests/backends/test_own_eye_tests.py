"""The libraries' own tests of their ``eye``, run with eyelike making each
eye (the plugin ``helpers/own_eye_tests.py``): sparse's, cubed's,
array-api-strict's and marray's (over NumPy, array-api-strict and torch),
from the test modules their wheels ship. Each library is installed by the
``namespaces`` session (array-api-strict by every session); elsewhere its
case skips. A test passes when theirs all pass and eyelike made eyes.

Bug (issue 45): marray's own eye tests over torch failed 13 of 26 through
eyelike (its namespace taken for torch's by its name); sparse's
``dtype="i4"`` was refused.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HELPERS = Path(__file__).parents[1] / "helpers"
SRC = Path(__file__).parents[2] / "src"
# Library -> its own test module and the tests of its eye there.
CASES = {
    "sparse": ("sparse.numba_backend.tests.test_coo", "test_eye"),
    "cubed": ("cubed.tests.test_array_api", "eye"),
    "array_api_strict": ("array_api_strict.tests.test_creation_functions", "eye"),
    "marray": ("marray.tests.test_marray", "test_creation and eye"),
}


@pytest.mark.parametrize("library", sorted(CASES))
def test_own_eye_tests_through_eyelike(library: str, tmp_path: Path) -> None:
    module, selection = CASES[library]
    if importlib.util.find_spec(library) is None:
        pytest.skip(f"{library} is installed by nox -s namespaces")
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"this {library} ships no {module}")
    env = {
        **os.environ,
        "EYELIKE_OWN_TESTS": library,
        "PYTHONPATH": os.pathsep.join([str(SRC), str(HELPERS)]),
    }
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "own_eye_tests",
            "-c",
            os.devnull,
            "--rootdir",
            str(tmp_path),
            "--pyargs",
            module,
            "-k",
            selection,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    made = re.search(r"eyelike made (\d+) eyes; the library's own eye (\d+)", out)
    passed = re.search(r"(\d+) passed", out)
    assert made is not None, out[-4000:]
    assert passed is not None, out[-4000:]
    assert int(made.group(1)) > 0, out[-4000:]
    assert "failed" not in out.splitlines()[-1], out[-4000:]
