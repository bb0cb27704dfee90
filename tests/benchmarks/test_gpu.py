"""The GPU benchmark's plan, checks and clockwork, on the CPU: which cases it
runs and in what order, that its CuPy peers make the right output and its
check catches a wrong one (run on NumPy standing in for CuPy), that it
keeps to ``--time-limit`` and writes every finished case at once, and that
``scripts/gpu-check.sh`` passes it a time limit under its ``timeout``.
Nothing here times a GPU or needs one.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchmarks.__main__ as bench_cli
import numpy as np
import pytest
from benchmarks import cases, gpu, gpu_cupy, gpu_report
from benchmarks.__main__ import main
from benchmarks.cases import GPU_CASES as CASES
from benchmarks.cases import GpuCase as Case
from benchmarks.gpu_cupy import Lib, Peer
from benchmarks.gpu_report import OUT_OF_TIME
from helpers import reference

import eyelike
from eyelike._backends.cupy import check_dtype
from eyelike._backends.cupy.planning import plan
from eyelike._validate.dtypes import EXTRA_NAMES, STANDARD_NAMES

MIB256 = 1 << 28
ROOT = Path(__file__).resolve().parents[2]


def _cupy_dtypes() -> set[str]:
    """Every dtype name eyelike's CuPy backend accepts (by its own rule)."""
    names = set()
    for name in (*STANDARD_NAMES, *EXTRA_NAMES):
        try:
            check_dtype(cases.dtype_of(name))
        except TypeError:
            continue
        names.add(name)
    return names


# ---------------------------------------------------------------- the cases


def test_every_cupy_dtype_has_a_batch_of_256_mib_or_more() -> None:
    """Bug: a dtype whose GPU figure is missing, so the kernel's target,
    every dtype at >= 256 MiB, cannot be read off a run."""
    want = _cupy_dtypes()
    assert len(want) == 15  # the 13 standard ones, float16 and bfloat16
    covered = {
        c.dtype
        for c in CASES
        if "cupy" in c.libs and c.batch and not c.per_matrix and c.nbytes >= MIB256
    }
    assert covered == want
    # ... each against the limit and zeros + diagonal (the "core" peers).
    assert all(c.peers in ("core", "all") for c in CASES)


def _kinds(c: Case) -> set[str]:
    launches = plan(c.shape, None, c.np_dtype.itemsize, contiguous=True, address=0)
    assert all(launch.vector for launch in launches)
    return {launch.kind for launch in launches}


def test_per_matrix_cases_take_both_per_matrix_kernels() -> None:
    """Bug: per-matrix k missing from the GPU run, or only one of its two
    vector kernels timed (the small-matrix one, for matrices under 64 bytes,
    at 1 byte and at a wider type; the regular one over 64 x 64)."""
    per_matrix = [c for c in CASES if c.per_matrix]
    assert per_matrix
    assert all(c.libs == ("cupy",) and c.nbytes >= MIB256 for c in per_matrix)
    kinds = {c.name: _kinds(c) for c in per_matrix}
    assert all(len(k) == 1 for k in kinds.values())
    small = [c for c in per_matrix if kinds[c.name] == {"small"}]
    regular = [c for c in per_matrix if kinds[c.name] == {"per_matrix"}]
    assert {c.np_dtype.itemsize for c in small} >= {1, 4}
    assert any(c.n == 64 and c.dtype == "float32" for c in regular)
    assert len(small) + len(regular) == len(per_matrix)


@pytest.mark.parametrize(("batch", "n"), [(20, 3), (7, 4), (300, 2), (1, 5)])
def test_per_matrix_offsets_and_ones(batch: int, n: int) -> None:
    """Bug: the offsets miss a clamped k, or the count of ones the check
    wants is wrong (every peer would fail, or a wrong one pass)."""
    c = Case((batch,), n, "float32", per_matrix=True)
    ks = c.offsets(np)
    assert ks.dtype == np.int32
    assert ks.shape == (batch,)
    if batch >= 2 * n + 1:
        assert set(ks.tolist()) == set(range(-n, n + 1))
    assert c.ones == int(np.count_nonzero(reference((batch,), n, n, ks.tolist())))


def test_the_targets_run_first() -> None:
    """Bug: an order that spends the time limit on the large outputs before
    the cases the targets are read from."""
    names = [c.name for c in CASES]
    assert names[0] == "16384x64x64 float32"
    assert CASES[0].libs == ("cupy", "torch", "jax")
    assert CASES[1].per_matrix
    assert CASES[1].nbytes == MIB256
    tiny = names.index("3x3 float32")
    assert tiny <= 2
    big = [i for i, c in enumerate(CASES) if c.nbytes > 300 << 20]
    targets = [i for i, c in enumerate(CASES) if c.nbytes == MIB256 or not c.batch]
    targets.remove(names.index("16384x16384 float32"))  # 1 GiB, one matrix
    assert max(targets) < min(big)
    # torch and JAX on every dtype both have, besides float32.
    pairs = {c.dtype for c in CASES if c.libs == ("torch", "jax")}
    assert pairs == {"bool", "uint8", "float16", "float64"}


def test_case_names_and_sizes() -> None:
    assert len({(c.name, c.libs) for c in CASES}) == len(CASES)
    c = Case((1 << 24,), 4, "uint8", per_matrix=True)
    assert c.name == "16777216x4x4 uint8 k=b%9-4"
    assert c.nbytes == MIB256
    assert Case((32768,), 64, "bfloat16").nbytes == MIB256


# ------------------------------------------- the CuPy peers, run on NumPy


class _WritableDiagonal(np.ndarray):  # type: ignore[type-arg]
    """NumPy's diagonal is read-only; CuPy's, which the idiom writes, is not."""

    def diagonal(self, offset: Any = 0, axis1: Any = 0, axis2: Any = 1) -> Any:
        assert (offset, axis1, axis2) == (0, -2, -1)
        base = self.view(np.ndarray)
        *lead, rows, cols = base.shape
        *lead_strides, row_stride, col_stride = base.strides
        return np.lib.stride_tricks.as_strided(
            base,
            (*lead, min(rows, cols)),
            (*lead_strides, row_stride + col_stride),
            writeable=True,
        )


@pytest.fixture
def cupy_on_numpy(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A `CuPyLib` whose namespace is NumPy, and eyelike's calls made on
    NumPy: the peers' code and the checks run as they would on CuPy."""
    fake = types.SimpleNamespace(
        **{name: getattr(np, name) for name in dir(np) if not name.startswith("_")}
    )
    fake.zeros = lambda shape, dtype: np.zeros(shape, dtype).view(_WritableDiagonal)

    def on_numpy(function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("xp") is fake:
                kwargs["xp"] = np
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(gpu_cupy, "eye", on_numpy(eyelike.eye))
    lib = gpu_cupy.CuPyLib.__new__(gpu_cupy.CuPyLib)
    lib.cp = fake
    return lib


def _small(case: Case) -> Case:
    """The same kind of case, small enough for the CPU."""
    batch = (2 * case.n + 3,) if case.per_matrix else case.batch and (3,)
    n = min(case.n, 6)
    return Case(batch, n, case.dtype, case.per_matrix, case.libs, case.peers)


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if "cupy" in c.libs],
    ids=lambda c: c.name.replace(" ", "-"),
)
def test_cupy_peers_are_right_and_the_check_catches_wrong_ones(
    cupy_on_numpy: Any, case: Case
) -> None:
    """Bug: a CuPy peer that makes the wrong output (the bench would time
    it, or fail), or a check that passes a wrong one: ones missing, an extra
    one, or a one moved within its row (count unchanged)."""
    lib, c = cupy_on_numpy, _small(case)
    peers = lib.peers(c)
    roles = [p.role for p in peers]
    assert roles.count("eyelike") == 1
    assert roles.count("limit") == 1
    names = {p.name for p in peers}
    if c.per_matrix:
        assert {
            "cupy.zeros+fancy-index write",
            "cupy.equal(cols-rows, k, out=)",
        } <= names
    elif c.batch:
        assert "cupy.zeros+diagonal fill" in names
        assert ("cupy.eye+broadcast copy" in names) == (c.peers == "all")
    want = reference(c.batch, c.n, c.n, c.offsets(np).tolist() if c.per_matrix else 0)
    for peer in peers:
        got = peer.fn()
        zeros = peer.role == "limit"
        assert lib.check(got, c, zeros) == "", peer.name
        if zeros:
            assert lib.check(got + 1, c, True) != ""
            continue
        values = np.asarray(got)
        np.testing.assert_array_equal(values == 1, want == 1, err_msg=peer.name)
        assert np.count_nonzero(values) == np.count_nonzero(want), peer.name
        assert lib.check(np.zeros_like(got), c, False) != ""
        extra = np.array(got)
        extra.reshape(-1)[np.flatnonzero(want.reshape(-1) == 0)[0]] = 1
        assert "non-zeros" in lib.check(extra, c, False)
        moved = np.array(got)
        flat_want = want.reshape(-1, c.n)
        row = int(np.flatnonzero(flat_want.any(axis=1))[0])
        col = int(np.flatnonzero(flat_want[row])[0])
        moved.reshape(-1, c.n)[row, col] = 0
        moved.reshape(-1, c.n)[row, (col + 1) % c.n] = 1
        assert "diagonal all 1: False" in lib.check(moved, c, False), peer.name


def test_bfloat16_is_checked_by_its_bits(cupy_on_numpy: Any) -> None:
    """Bug: 1.0 in bfloat16 read as anything but 0x3F80, or a -0.0 that
    passes as zero."""
    c = Case((2,), 3, "bfloat16")
    got = np.zeros((2, 3, 3), c.np_dtype)
    assert cupy_on_numpy.check(got, c, True) == ""
    got[0, 0, 1] = -0.0
    assert cupy_on_numpy.check(got, c, True) != ""


# --------------------------------------------------- time limit and rows


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _FakeLib(Lib):
    name = "fake"
    timing = "fake clock"

    def __init__(self, out_of_time_after: int = 10**9) -> None:
        self.timed = 0  # timings of the rounds (not the calls probe)
        self.after = out_of_time_after

    def per_call(self, fn: Callable[[], Any], calls: int) -> float:
        if calls != 4:  # _calls probes with 4 calls
            self.timed += 1
        return 1e-4

    def latency(self, fn: Callable[[], Any]) -> float:
        return 2e-4

    def check(self, got: Any, case: Case, zeros: bool) -> str:
        return ""

    def peers(self, case: Case) -> list[Peer]:
        return [
            Peer(self, "ours", lambda: 1, "eyelike"),
            Peer(self, "zeros", lambda: 0, "limit"),
        ]

    def out_of_time(self) -> bool:
        return self.timed >= self.after


def _rows_of(case: Case, note: str = "") -> list[dict[str, Any]]:
    meta = {"device": "fake", "max_sm_clock_mhz": None, "seed": 1, "not_run": None}
    row = gpu_report.row(case, _FakeLib(), "(not run)" if note else "ours")
    if note:
        row["note"] = note
    else:
        row.update(per_call_us=1.0, latency_us=2.0, GB_per_s=3.0, x_limit=1.0)
    return [{**meta, **row}]


def _case(i: int, kind: str = "a") -> Case:
    return Case((i + 1,), 4, "float32", libs=(kind,))


def _schedule(
    seconds: list[float], kinds: str, deadline: float | None
) -> tuple[list[dict[str, Any]], list[str], _Clock]:
    clock = _Clock()
    start = clock.now
    cases = [_case(i, kind) for i, kind in enumerate(kinds)]
    cut: list[bool] = []
    seen: list[str] = []

    def run_case(case: Case, out_of_time: Callable[[], bool]) -> list[dict[str, Any]]:
        clock.now += seconds[case.batch[0] - 1]
        cut.append(out_of_time())
        return _rows_of(case)

    def not_run(case: Case, note: str) -> list[dict[str, Any]]:
        return _rows_of(case, note)

    def on_case(case: Case, rows: list[dict[str, Any]], took: float) -> None:
        seen.append(f"{case.name}: {len(rows)} {took:g}")

    rows = gpu_report.run_cases(
        cases,
        run_case,
        not_run,
        deadline=None if deadline is None else start + deadline,
        clock=clock,
        on_case=on_case,
    )
    assert len(seen) == len(cases)  # called after every case, run or not
    return rows, seen, clock


def test_cases_start_only_while_time_is_left() -> None:
    """Bug: a case started that cannot end before the limit (the run is
    killed, and with it the figures), or a case dropped without a word."""
    rows, seen, clock = _schedule([3, 3, 3, 3, 0.5], "aaaab", deadline=10)
    notes = [r["note"] for r in rows]
    # 3 s each: the fourth "a" would need 3.6 s with 1 s left; "b", never
    # seen, is guessed from the longest case so far, 3.6 s too.
    assert notes[:3] == [None, None, None]
    assert all(n.startswith(OUT_OF_TIME) for n in notes[3:])
    assert "1 s left, about 4 s needed" in notes[3]
    assert clock.now == 109
    assert seen[3].endswith(": 1 0")
    assert gpu_report.not_run_cases(rows) == [
        "4x4x4 float32 on fake",
        "5x4x4 float32 on fake",
    ]


def test_a_short_case_still_fits_after_a_long_one_is_left_out() -> None:
    rows, _, _ = _schedule([5, 1, 9, 1], "abab", deadline=12)
    # a 5 s, b 1 s; a again needs 6 s (6 left): runs, 9 s; b needs 1.2 s,
    # with -3 s left: out.
    assert [r["note"] is None for r in rows] == [True, True, True, False]
    # a 5 s, b 1 s; a again needs 6 s with 5.5 s left: out; b still fits.
    rows, _, _ = _schedule([5, 1, 5, 1], "abab", deadline=11.5)
    assert [r["note"] is None for r in rows] == [True, True, False, True]


def test_no_limit_runs_everything_and_a_past_limit_nothing() -> None:
    rows, _, _ = _schedule([50.0] * 4, "aaaa", deadline=None)
    assert all(r["note"] is None for r in rows)
    rows, _, _ = _schedule([1.0] * 3, "abc", deadline=0)
    assert all(r["note"].startswith(OUT_OF_TIME) for r in rows)
    assert len(gpu_report.not_run_cases(rows)) == 3


def test_rounds_stop_at_the_limit_but_one_always_runs() -> None:
    """Bug: rounds going on past the limit (the `timeout` kills the run),
    or a case cut to no rounds at all (no figure, a crash on the median)."""
    for after, want in [(2 * 2, 2), (0, 1), (10**9, 15)]:
        lib = _FakeLib(out_of_time_after=after)
        case = Case((3,), 4, "float32", libs=("fake",), rounds=15)
        rows = gpu._run_case(
            case,
            [lib],
            gpu.random.Random(0),
            lambda: None,
            lambda s: None,
            0.0,
            lib.out_of_time,
        )
        assert [r["rounds"] for r in rows] == [want, want]
        assert lib.timed == 2 * want
        note = rows[0]["note"]
        assert (note is None) == (want == 15)
        if note:
            assert note == f"{want} of 15 rounds: the time limit came"
        assert all(r["error"] is None for r in rows)
        assert all(math.isclose(r["per_call_us"], 100) for r in rows)
        assert math.isclose(rows[0]["x_limit"], 1.0)


def test_table_lists_the_cases_not_run() -> None:
    rows = _rows_of(_case(0)) + _rows_of(_case(1), f"{OUT_OF_TIME} (3 s left)")
    text = gpu_report.table(rows)
    assert "2x4x4 float32" in text
    assert f"{OUT_OF_TIME} (3 s left)" in text
    assert text.splitlines()[-1] == f"1 case(s) {OUT_OF_TIME}: 2x4x4 float32 on fake"


def test_json_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    rows = _rows_of(_case(0)) + _rows_of(_case(1), f"{OUT_OF_TIME} (0 s left)")
    gpu_report.write_json(str(path), rows[:1], complete=False)
    gpu_report.write_json(str(path), rows, complete=True)
    got = json.loads(path.read_text())
    assert got["complete"] is True
    assert got["cases_not_run"] == ["2x4x4 float32 on fake"]
    assert got["rows"] == rows
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.json"]


# ------------------------------------------------------- the command line


def _fake_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `cupy` module that reports one device (nothing else is touched:
    `run_gpu` is replaced too)."""
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))
    monkeypatch.setitem(sys.modules, "cupy", fake)


def test_time_limit_reaches_the_run_and_each_case_is_written_at_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Bug: the limit not passed on (or not counted from the start), or the
    JSON written only at the end, so that a killed run leaves nothing."""
    _fake_device(monkeypatch)
    path = tmp_path / "gpu.json"
    first, second = _rows_of(_case(0)), _rows_of(_case(1))
    on_disk: list[dict[str, Any]] = []

    def run_gpu(**kwargs: Any) -> list[dict[str, Any]]:
        assert 29 < kwargs["deadline"] - time.monotonic() <= 30
        kwargs["on_case"](first)
        on_disk.append(json.loads(path.read_text()))
        kwargs["on_case"](first + second)
        on_disk.append(json.loads(path.read_text()))
        return first + second

    monkeypatch.setattr(gpu, "run_gpu", run_gpu)
    argv = ["--backend", "cupy", "--time-limit", "30", "--json", str(path)]
    assert main(argv) == 0
    assert [(d["complete"], len(d["rows"])) for d in on_disk] == [
        (False, 1),
        (False, 2),
    ]
    final = json.loads(path.read_text())
    assert final["complete"] is True
    assert final["rows"] == first + second
    assert "1x4x4 float32" in capsys.readouterr().out


def test_a_killed_run_leaves_the_finished_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_device(monkeypatch)
    path = tmp_path / "gpu.json"

    def run_gpu(**kwargs: Any) -> list[dict[str, Any]]:
        assert kwargs["deadline"] is None
        kwargs["on_case"](_rows_of(_case(0)))
        raise KeyboardInterrupt  # the signal of a kill, as far as files go

    monkeypatch.setattr(gpu, "run_gpu", run_gpu)
    with pytest.raises(KeyboardInterrupt):
        main(["--backend", "cupy", "--json", str(path)])
    got = json.loads(path.read_text())
    assert got["complete"] is False
    assert len(got["rows"]) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--time-limit", "10"], "--time-limit: for the GPU table only"),
        (["--backend", "cupy", "--time-limit", "-1"], "non-negative number"),
        (["--backend", "cupy", "--time-limit", "inf"], "non-negative number"),
    ],
)
def test_time_limit_usage_errors(
    args: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def never(*args: object, **kwargs: object) -> None:
        msg = "the benchmark ran before its arguments were checked"
        raise AssertionError(msg)

    monkeypatch.setattr(bench_cli, "run", never)
    monkeypatch.setattr(bench_cli, "_main_gpu", never)
    with pytest.raises(SystemExit) as info:
        main([*args])
    assert info.value.code == 2
    assert message in capsys.readouterr().err.splitlines()[-1]


def test_time_limit_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    got: list[Any] = []
    monkeypatch.setattr(bench_cli, "_main_gpu", lambda args, started: got.append(args))
    main(["--backend", "cupy", "--time-limit", "12.5"])
    assert got[0].time_limit == 12.5


# ----------------------------------------------------- scripts/gpu-check.sh

_FAKE_PYTHON = r"""#!/usr/bin/env bash
# Stands in for python in scripts/gpu-check.sh: a preflight and tests that
# pass, a benchmark that records its arguments and writes $FAKE_JSON.
case "$1" in
  --version) echo "Python (fake)" ;;
  -c) exec "$REAL_PYTHON" "$@" ;;
  scripts/gpu_preflight.py) if [ "$2" = probe ]; then echo "fake probe"; fi ;;
  -m)
    if [ "$2" = benchmarks ]; then
      echo "$@" >"$FAKE_LOG"
      json=""
      prev=""
      for a in "$@"; do
        if [ "$prev" = --json ]; then json=$a; fi
        prev=$a
      done
      cp "$FAKE_JSON" "$json"
      exit "${FAKE_BENCH_EXIT:-0}"
    fi
    echo "fake $2" ;;
esac
"""


@pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("timeout") is None,
    reason="needs bash and timeout",
)
@pytest.mark.parametrize(
    ("budget", "errors", "complete", "bench_exit", "want_exit"),
    [
        (350, 0, True, 0, 0),
        (100, 0, True, 0, 0),
        (350, 1, True, 0, 5),
        (350, 0, False, 124, 5),
    ],
)
def test_gpu_check_passes_a_time_limit_under_its_timeout(
    tmp_path: Path,
    budget: int,
    errors: int,
    complete: bool,
    bench_exit: int,
    want_exit: int,
) -> None:
    """Bug: the benchmark started without a time limit, or with one at or
    past its `timeout` (killed, not stopped); cases not run, rows with
    errors or a cut-short JSON not reported."""
    fake = tmp_path / "python"
    fake.write_text(_FAKE_PYTHON)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    rows = _rows_of(_case(0)) + _rows_of(_case(1), f"{OUT_OF_TIME} (2 s left)")
    if errors:
        rows[0]["error"] = "AssertionError: wrong"
    gpu_report.write_json(str(tmp_path / "fake.json"), rows, complete=complete)
    out = tmp_path / "out"
    env = {
        **os.environ,
        "PYTHON": str(fake),
        "REAL_PYTHON": sys.executable,
        "FAKE_JSON": str(tmp_path / "fake.json"),
        "FAKE_LOG": str(tmp_path / "bench-args"),
        "FAKE_BENCH_EXIT": str(bench_exit),
        "OUT": str(out),
        "GPU_CHECK_BUDGET": str(budget),
    }
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu-check.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    summary = (out / "summary.txt").read_text()
    assert result.returncode == want_exit, summary + result.stderr
    args = (tmp_path / "bench-args").read_text().split()
    time_limit = int(args[args.index("--time-limit") + 1])
    bench_line = next(x for x in summary.splitlines() if "bench: exit" in x)
    timeout_s = int(bench_line.split("limit ")[1].split("s")[0])
    assert time_limit == timeout_s - 12
    assert timeout_s <= min(120, budget - 5)
    assert "1 case(s) not run: out of time" in summary
    assert "2x4x4 float32 on fake" in summary
    assert ("row(s) with an error" in summary) == bool(errors)
    assert ("is incomplete" in summary) == (not complete)


def test_bfloat16_without_ml_dtypes_is_skipped_not_failed(
    cupy_on_numpy: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug: a machine without ml_dtypes fails the whole bench (at import, or
    with an error row) instead of leaving out the bfloat16 case."""

    def missing(name: str) -> Any:
        msg = f"No module named 'ml_dtypes' ({name})"
        raise ImportError(msg)

    (case,) = [c for c in CASES if c.dtype == "bfloat16"]
    assert cupy_on_numpy.skip(case) == ""
    monkeypatch.setattr(cases, "dtype_of", missing)
    assert case.nbytes == MIB256  # known without ml_dtypes
    assert "needs ml_dtypes" in cupy_on_numpy.skip(case)


def test_run_gpu_wires_cases_libraries_limit_and_progress(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bug: a case run on a library it does not name, the limit or the
    rounds not handed to the cases, or the rows so far not passed on (and
    printed) after each case. CuPy, its libraries and clocks are fakes."""
    device = types.SimpleNamespace(id=0, synchronize=lambda: None)
    cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceProperties=lambda i: {"name": b"Fake"}),
        Device=lambda: device,
    )
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))
    lib = _FakeLib()
    lib.name = "cupy"
    monkeypatch.setattr(gpu, "libraries", lambda cp: ([lib], ["torch: no"]))
    monkeypatch.setattr(gpu, "_heat", lambda cp, seconds, clock: None)
    monkeypatch.setattr(gpu, "_Clock", lambda cp: types.SimpleNamespace(max_mhz=0))
    cases = [
        Case((2,), 4, "float32", libs=("cupy",)),
        Case((3,), 4, "float32", libs=("torch", "jax")),  # none present
        Case((4,), 4, "float32"),
    ]
    seen: list[int] = []
    rows = gpu.run_gpu(
        rounds=3,
        seed=5,
        deadline=time.monotonic() + 600,
        on_case=lambda so_far: seen.append(len(so_far)),
        cases=cases,
    )
    assert seen == [2, 2, 4]
    assert [r["case"] for r in rows] == ["2x4x4 float32"] * 2 + ["4x4x4 float32"] * 2
    assert all(r["rounds"] == 3 and r["device"] == "Fake" for r in rows)
    assert all(r["seed"] == 5 and r["not_run"] == "torch: no" for r in rows)
    err = capsys.readouterr().err
    assert "benchmarks: 3x4x4 float32: 0 rows" in err
    assert "  4x4x4 float32" in err  # each case's rows under its line
    # A limit already past: every case gets a row per library present.
    rows = gpu.run_gpu(deadline=time.monotonic() - 1, cases=cases)
    assert [(r["case"], r["peer"]) for r in rows] == [
        ("2x4x4 float32", "(not run)"),
        ("4x4x4 float32", "(not run)"),
    ]
    assert all(r["note"].startswith(OUT_OF_TIME) for r in rows)
