"""The command line, in process and as ``python -m eyelike``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eyelike._cli import main


def _matrix(text: str) -> np.ndarray:  # type: ignore[type-arg]
    rows = [
        [int(v) for v in line.replace("[", " ").replace("]", " ").split()]
        for line in text.splitlines()
        if line.strip(" []")
    ]
    return np.array(rows)


def test_batched_eye(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["3", "4", "-k", "1", "--batch-shape", "2", "--dtype", "int32"])
    assert code == 0
    got = _matrix(capsys.readouterr().out)
    np.testing.assert_array_equal(got, np.vstack([np.eye(3, 4, k=1)] * 2))


def test_per_matrix_k_and_backend(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("array_api_strict")
    code = main(
        ["2", "-k", "0,1", "--batch-shape", "2", "--dtype", "int8",
         "--backend", "array_api_strict"]
    )  # fmt: skip
    assert code == 0
    got = _matrix(capsys.readouterr().out)
    np.testing.assert_array_equal(got, np.vstack([np.eye(2), np.eye(2, k=1)]))


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["-3"], "n_rows"),
        (["3", "--dtype", "foo"], "foo"),
        (["3", "-k", "x"], "-k"),
        (["3", "--batch-shape", "2,-1"], "batch_shape[1]"),
        (["3", "--backend", "nope"], "--backend"),
        (["3.5"], "ROWS"),
        ([], "ROWS"),
    ],
)
def test_bad_arguments_exit_2(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert words in err
    assert "Traceback" not in err


def test_python_dash_m() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "eyelike", "2", "--dtype", "int8"],
        capture_output=True,
        text=True,
        check=True,
    )
    np.testing.assert_array_equal(_matrix(done.stdout), np.eye(2))


# OpenVINO forks a helper process while JAX's threads run: JAX warns.
@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_bench_runs_and_checks_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A smoke test of the command, not a timing: every peer's output is
    # compared with NumPy inside the run, which raises on a mismatch.
    target = tmp_path / "bench.json"
    code = main(["bench", "--quick", "--budget", "0", "--no-progress",
                 "--json", str(target)])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "eyelike" in out
    assert "limit_alloc" in out
    rows = json.loads(target.read_text())["rows"]
    assert {r["peer"] for r in rows} >= {"eyelike", "np.eye", "limit_alloc"}


def test_bench_numpy_only_times_no_other_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "bench.json"
    code = main(["bench", "--quick", "--numpy-only", "--budget", "0",
                 "--no-progress", "--json", str(target)])  # fmt: skip
    assert code == 0
    capsys.readouterr()
    peers = {r["peer"] for r in json.loads(target.read_text())["rows"]}
    assert peers >= {"eyelike", "eyelike.eye_like", "np.eye", "limit_alloc"}
    others = ("torch", "jax", "openvino", "onnxruntime")
    assert not [p for p in peers if p.startswith(others)]


def test_gpu_bench_without_device_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import HAS_GPU

    if HAS_GPU:
        pytest.skip("a CUDA device is present: the GPU bench runs in scripts/")
    assert main(["bench", "--backend", "cupy"]) == 2
    assert "no CUDA device" in capsys.readouterr().err
