"""The libraries' own tests of their ``eye``, run with eyelike making each eye
(the plugin ``helpers/own_eye_tests.py``): sparse's, cubed's, array-api-
strict's and marray's (over NumPy, array-api-strict and torch), from the
test modules their wheels ship; and torch's own cases of ``torch.eye`` (its
OpInfo: 1,440 samples over 16 dtypes, 3 error inputs). Each library is
installed by the ``namespaces`` session (array-api-strict by every session);
elsewhere its case skips. A test passes when theirs all pass and eyelike
made eyes.

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

import eyelike

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


def test_torch_s_own_eye_samples_through_eyelike() -> None:
    """torch's own test cases of ``torch.eye`` (its OpInfo, which its test
    suite runs: every sample over every dtype it declares, and its error
    inputs), with eyelike making each eye: equal to torch's, and each error
    input refused."""
    torch = pytest.importorskip("torch")
    opinfo = pytest.importorskip("torch.testing._internal.common_methods_invocations")
    (op,) = [o for o in opinfo.op_db if o.name == "eye"]
    dtypes = sorted(op.supported_dtypes("cpu"), key=str)
    samples = 0
    for dtype in dtypes:
        for sample in op.sample_inputs("cpu", dtype):
            kwargs = {k: v for k, v in sample.kwargs.items() if k != "requires_grad"}
            got = eyelike.eye(sample.input, *sample.args, xp=torch, **kwargs)
            want = torch.eye(sample.input, *sample.args, **kwargs)
            assert got.dtype == want.dtype
            assert got.device == want.device
            if dtype.itemsize == 1:  # (float8 has no torch.equal: its bits)
                got, want = got.view(torch.uint8), want.view(torch.uint8)
            assert torch.equal(got, want), (sample, dtype)
            samples += 1
    errors = 0
    for error in op.error_inputs("cpu"):
        sample = error.sample_input
        with pytest.raises(ValueError, match="must be non-negative"):
            eyelike.eye(sample.input, *sample.args, xp=torch, **sample.kwargs)
        errors += 1
    assert samples > 0
    assert errors > 0
