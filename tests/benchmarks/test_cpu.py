"""The CPU benchmark's command line (``python -m benchmarks``): a quick run
whose outputs are checked, usage errors before anything runs, the help,
and the plot. Nothing here is a timing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import benchmarks.__main__ as bench_cli
import pytest
from benchmarks import plot as bench_plot
from benchmarks.__main__ import main
from benchmarks.cases import CPU_CASES


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_bench_runs_and_checks_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A smoke test of the command, not a timing: every peer's output is
    # compared with NumPy inside the run, which raises on a mismatch.
    target = tmp_path / "bench.json"
    code = main(["--quick", "--budget", "0", "--no-progress",
                 "--json", str(target)])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "eyelike" in out
    assert "limit_alloc" in out
    rows = json.loads(target.read_text())["rows"]
    assert {r["peer"] for r in rows} >= {"eyelike", "np.eye", "limit_alloc"}
    if "jax" in sys.modules:  # installed, and imported by the run
        assert {"jax: eyelike", "jax: idiom"} <= {r["peer"] for r in rows}


def test_bench_numpy_only_times_no_other_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "bench.json"
    code = main(["--quick", "--numpy-only", "--budget", "0",
                 "--no-progress", "--json", str(target)])  # fmt: skip
    assert code == 0
    capsys.readouterr()
    peers = {r["peer"] for r in json.loads(target.read_text())["rows"]}
    assert peers >= {"eyelike", "eyelike.eye_like", "np.eye", "limit_alloc"}
    others = ("torch", "jax", "openvino", "onnxruntime")
    assert not [p for p in peers if p.startswith(others)]


def test_gpu_bench_without_device_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    from helpers import HAS_GPU

    if HAS_GPU:
        pytest.skip("a CUDA device is present: the GPU bench runs in scripts/")
    assert main(["--backend", "cupy"]) == 2
    assert "no CUDA device" in capsys.readouterr().err


def _bench_must_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any timing fail: a usage error must come before the run."""

    def run(*args: object, **kwargs: object) -> None:
        msg = "the benchmark ran before its arguments were checked"
        raise AssertionError(msg)

    monkeypatch.setattr(bench_cli, "run", run)
    monkeypatch.setattr(bench_cli, "_main_gpu", run)


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[0].startswith("usage: python -m benchmarks")
    return err.splitlines()[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "-1"], "--budget: expected a non-negative number of seconds"),
        (["--budget", "nan"], "--budget: expected a non-negative number"),
        (["--budget", "inf"], "--budget: expected a non-negative number"),
        (["--budget", "x"], "--budget: expected a non-negative number"),
        (["--plot", "{tmp}/missing/plot.png"], "missing does not exist"),
        (["--plot", "{tmp}"], "is a directory"),
        (["--plot", "{tmp}/plot.xyz"], "name a file ending in one of"),
        (["--plot", "{tmp}/plot"], "name a file ending in one of"),
        (["--json", "{tmp}/missing/rows.json"], "missing does not exist"),
        (["--json", "{tmp}"], "is a directory"),
        (["--json", "{tmp}/a-file/rows.json"], "does not exist"),
        (["--backend", "cupy", "--quick"], "--quick: for the CPU table only"),
        (["--backend", "cupy", "--plot", "{tmp}/p.png"], "--plot: for the CPU"),
        (["--backend", "cupy", "--budget", "1"], "--budget: for the CPU"),
    ],
)
def test_bench_usage_errors_come_first(
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if "--plot" in args and "cupy" not in args:  # the path check needs it
        pytest.importorskip("matplotlib")
    _bench_must_not_run(monkeypatch)
    (tmp_path / "a-file").write_text("")
    argv = [a.format(tmp=tmp_path) for a in args]
    assert message in _usage_error(argv, capsys)
    # Checking a path leaves nothing behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_bench_plot_without_matplotlib(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _bench_must_not_run(monkeypatch)
    # None in sys.modules makes `import matplotlib` raise ImportError.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    line = _usage_error(["--plot", str(tmp_path / "p.png")], capsys)
    assert "--plot needs matplotlib, which is not installed" in line


def test_bench_checks_leave_an_existing_file_as_it_was(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The file is opened for writing without truncating it; then the run
    # (stubbed here) fails, and the old results are still there.
    _bench_must_not_run(monkeypatch)
    target = tmp_path / "rows.json"
    target.write_text("old results")
    with pytest.raises(AssertionError, match="ran before"):
        main(["--json", str(target)])
    assert target.read_text() == "old results"


def test_bench_help_is_plain_text_and_explains_every_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "`" not in out
    assert out.startswith("usage: python -m benchmarks")
    for action in bench_cli._parser()._actions:
        assert action.help, action.option_strings
        assert action.option_strings[-1] in out


@pytest.mark.filterwarnings("error")  # matplotlib's "No artists with labels"
def test_bench_quick_plot_has_every_case_and_the_legend_outside(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("matplotlib")
    figures: list[Any] = []

    def plot(rows: list[dict[str, Any]], path: str) -> Any:
        figures.append(real_plot(rows, path))
        return figures[-1]

    real_plot = bench_plot.plot
    monkeypatch.setattr(bench_plot, "plot", plot)
    target = tmp_path / "quick.png"
    code = main(["--quick", "--numpy-only", "--budget", "0",
                 "--no-progress", "--plot", str(target)])  # fmt: skip
    assert code == 0
    capsys.readouterr()
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (fig,) = figures
    (ax,) = fig.axes
    cases = [t.get_text() for t in ax.get_yticklabels()]
    assert cases == [c.name for c in CPU_CASES if c.nbytes < 1 << 22]
    assert len(ax.patches) >= 4 * len(cases)  # eyelike, eye_like, NumPy, limit
    legend = ax.get_legend()
    assert "eyelike" in [t.get_text() for t in legend.get_texts()]
    fig.draw_without_rendering()
    # The legend starts right of the axes: it covers no bar.
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1


# Every peer name a full run on this machine has (the CPU table's).
_PEERS = [
    "eyelike", "eyelike.eye_like", "np.eye", "np.broadcast_to(eye).copy",
    "np.zeros+einsum diag", "fill+einsum diag", "limit_alloc", "limit_touched",
    "limit_memset (zeros only)", "torch.eye.expand.clone",
    "torch.zeros+diagonal.fill_", "torch: eyelike", "torch: eyelike.eye_like",
    "torch: idiom", "torch.compile: eyelike", "torch.compile: idiom",
    "jax.jit(broadcast eye)", "jax: eyelike", "jax: idiom", "jax.jit: eyelike",
    "jax.jit: idiom", "array_api_strict: eyelike", "array_api_strict: idiom",
    "openvino Eye-9 (copied out)", "onnxruntime EyeLike(+Expand)", "new-lib idiom",
]  # fmt: skip


def test_plot_styles_are_distinct_and_mark_eyelike_on_other_libraries() -> None:
    """Bug: six torch peers in near-identical orange; array-api-strict's
    bars in torch's and NumPy's colours. Every peer has a style of its own,
    each library one hue, and eyelike on a library is hatched."""
    pytest.importorskip("matplotlib")
    style = bench_plot.styles(_PEERS)
    assert len(set(map(str, style.values()))) == len(_PEERS)
    strict = {style[p][0] for p in _PEERS if p.startswith("array_api_strict")}
    others = {style[p][0] for p in _PEERS if not p.startswith("array_api_strict")}
    assert not strict & others
    assert all(bool(style[p][1]) == (": eyelike" in p) for p in _PEERS[:-1])
    torch = [style[p][0] for p in _PEERS if p.startswith("torch")]
    # Shades apart: every pair of torch colours differs by 0.05 or more in
    # some channel (near-identical shades were the bug).
    assert all(
        max(abs(a - b) for a, b in zip(c1, c2, strict=True)) >= 0.05
        for i, c1 in enumerate(torch)
        for c2 in torch[i + 1 :]
    )


def test_plot_bars_sorted_and_every_bar_labelled(tmp_path: Path) -> None:
    """Bug: bars in legend order rather than by their ratio, and only
    eyelike's bar had a number."""
    pytest.importorskip("matplotlib")
    ratios = {"eyelike": 1.2, "np.eye": 3.0, "torch: idiom": 0.8, "limit_alloc": 1.0}
    rows = [
        {"case": case, "peer": p, "x_limit": x * scale}
        for case, scale in (("a", 1.0), ("b", 2.0))
        for p, x in ratios.items()
    ]
    fig = bench_plot.plot(rows, str(tmp_path / "p.png"))
    (ax,) = fig.axes
    bars = sorted(ax.patches, key=lambda b: b.get_y())
    for group in (bars[:4], bars[4:]):  # top to bottom within each case
        widths = [b.get_width() for b in group]
        assert widths == sorted(widths)
    labels = [t.get_text() for t in ax.texts]
    assert len(labels) == len(rows)
    assert sorted(labels) == sorted(f"{r['x_limit']:.2f}" for r in rows)


def test_quick_run_has_a_case_for_jax() -> None:
    """Bug: --quick had float64 cases only, where JAX (without x64) takes
    no part."""
    quick = [c for c in CPU_CASES if c.nbytes < 1 << 22]
    assert any(c.dtype != "float64" for c in quick)
