"""The benchmark's command line: ``python -m benchmarks`` (``nox -s bench``),
from the repository's top folder. ``python -m benchmarks --help`` says what
it does; ``benchmarks/README.md`` says how and why."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .cases import CPU_CASES
from .cpu import run, table


def _seconds(text: str) -> float:
    """``--budget``, ``--time-limit``: a finite, non-negative number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        msg = f"expected a non-negative number of seconds; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _check_writable(parser: argparse.ArgumentParser, option: str, path: str) -> None:
    """Fail at once, not after the whole run, where ``path`` cannot be
    written. Nothing is left behind: an existing file is opened without
    truncating it, a new one is created and removed."""
    target = Path(path)
    if target.is_dir():
        parser.error(f"{option} {path}: is a directory, not a file")
    if not target.parent.is_dir():
        parser.error(f"{option} {path}: directory {target.parent} does not exist")
    try:
        if target.exists():
            target.open("r+b").close()
        else:
            target.open("xb").close()
            target.unlink()
    except OSError as exc:
        parser.error(f"{option} {path}: cannot write it ({exc.strerror or exc})")


def _check_plot(parser: argparse.ArgumentParser, path: str) -> None:
    """``--plot``: matplotlib importable and a file type it writes."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        parser.error(
            f"--plot needs matplotlib, which is not installed ({exc}); "
            "install it (nox -s bench does)"
        )
    _check_writable(parser, "--plot", path)
    types = Figure().canvas.get_supported_filetypes()
    suffix = Path(path).suffix.lstrip(".").lower()
    if suffix not in types:
        # savefig would add .png to a name without a known suffix: another
        # file than the one asked for.
        parser.error(
            f"--plot {path}: name a file ending in one of "
            f"{', '.join('.' + t for t in sorted(types))}"
        )


_DESCRIPTION = """\
Time eyelike against its peers (NumPy idioms, and PyTorch, JAX, OpenVINO and
ONNX Runtime where installed) and against the memory limit, in one process,
side by side, and print a table.

Every output is checked against NumPy before it is timed. The peers of a case
are timed round by round, in a new random order each round; times are medians
over the rounds, and ratios are medians of each round's ratio, so the
machine's drifting load cancels out. Ratios are to limit_alloc (a fresh
np.empty filled with zeros: the cost of handing out and writing new memory)
or, for out= cases, to limit_touched (fill(0) of an already-touched buffer,
one core)."""

_EPILOG = """\
examples:
  python -m benchmarks --quick --numpy-only             a few seconds
  python -m benchmarks --json docs/bench-cpu.json --plot docs/bench-cpu.png
  python -m benchmarks --only k=b%                      one offset per matrix
  python -m benchmarks --backend cupy --json gpu.json   the GPU table
  python -m benchmarks --backend cupy --time-limit 120 --json gpu.json
                                                 the same, within 2 minutes

--plot and --json are checked before anything runs; a usage error exits with
status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        # The description and epilog are laid out by hand (the examples).
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--json", metavar="FILE", help="also write every row of the table as JSON"
    )
    parser.add_argument(
        "--plot",
        metavar="FILE.png",
        help=(
            "also draw the ratios to the limit as a bar chart (needs "
            "matplotlib; .png, .svg, .pdf, ...; CPU table only)"
        ),
    )
    parser.add_argument(
        "--budget",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help=(
            "time to spend on each peer of a case, in seconds (default 0.5); "
            "every case runs at least 7 and at most 50 rounds, so 0 is the "
            "quickest run (CPU table only)"
        ),
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="only the cases under 4 MiB (seconds, not minutes; CPU table only)",
    )
    parser.add_argument(
        "--only",
        metavar="TEXT",
        help=(
            'only the cases whose name holds TEXT ("k=b%%": one offset per '
            "matrix; CPU table only)"
        ),
    )
    parser.add_argument(
        "--numpy-only",
        action="store_true",
        help=(
            "time no other library: eyelike against NumPy and the limits "
            "only (CPU table only)"
        ),
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="do not show the progress bar (tqdm, on stderr, where installed)",
    )
    parser.add_argument(
        "--backend",
        choices=["numpy", "cupy"],
        default="numpy",
        help=(
            "numpy: the CPU table (default); cupy: the GPU table, eyelike on "
            "CuPy, PyTorch and JAX against their own idioms (CUDA events)"
        ),
    )
    parser.add_argument(
        "--time-limit",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help=(
            "start no case, and end a running case's rounds, once SECONDS "
            "have passed since the command started; the cases left out are "
            "listed as not run (GPU table only; --json is rewritten after "
            "every case)"
        ),
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark command line; returns the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``python -m benchmarks``, as the command line
        passes them.

    Returns
    -------
    int
        0 on success, 2 where no CUDA device is there for ``--backend
        cupy``. A usage error (a bad ``--budget``, a ``--plot`` without
        matplotlib, a file that cannot be written) exits with status 2
        before anything runs (``SystemExit``).
    """
    started = time.monotonic()
    parser = _parser()
    args = parser.parse_args(argv)
    if args.backend != "cupy" and args.time_limit is not None:
        parser.error("--time-limit: for the GPU table only (--backend cupy)")
    if args.backend == "cupy":
        cpu_only = [
            option
            for option, given in (
                ("--plot", args.plot is not None),
                ("--budget", args.budget is not None),
                ("--quick", args.quick),
                ("--numpy-only", args.numpy_only),
                ("--only", args.only is not None),
            )
            if given
        ]
        if cpu_only:
            parser.error(
                f"{', '.join(cpu_only)}: for the CPU table only, not with "
                f"--backend cupy"
            )
    if args.plot is not None:
        _check_plot(parser, args.plot)
    if args.json is not None:
        _check_writable(parser, "--json", args.json)
    # Peers keep all their threads, but idle OpenMP threads (PyTorch) must
    # not spin on the cores while the next peer is timed.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if args.backend == "cupy":
        return _main_gpu(args, started)
    cases = CPU_CASES
    if args.quick:
        cases = [c for c in cases if c.nbytes < 1 << 22]
    if args.only is not None:
        cases = [c for c in cases if args.only in c.name]
    budget = 0.5 if args.budget is None else args.budget
    rows = run(cases, budget, not args.no_progress, not args.numpy_only)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    print(f"benchmarks: {cores} cores, numpy {np.__version__}")
    print(table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"cores": cores, "rows": rows}, f, indent=1)
    if args.plot:
        from .plot import plot

        plot(rows, args.plot)
    return 0


def _main_gpu(args: argparse.Namespace, started: float) -> int:
    try:
        import cupy

        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # no CuPy, no driver: say so, do not crash
        print(f"benchmarks: no CUDA device ({exc})", file=sys.stderr)
        return 2
    if count == 0:
        print("benchmarks: no CUDA device", file=sys.stderr)
        return 2
    from .gpu import run_gpu
    from .gpu_report import table as gpu_table
    from .gpu_report import write_json

    def on_case(rows: list[dict[str, Any]]) -> None:
        if args.json:  # every finished case on disk, should the run be killed
            write_json(args.json, rows, complete=False)

    limit = args.time_limit
    deadline = None if limit is None else started + limit
    rows = run_gpu(deadline=deadline, on_case=on_case)
    print(gpu_table(rows))
    if args.json:
        write_json(args.json, rows, complete=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
