"""The command line's outputs against NumPy's own writers, in time and peak
memory: the printed view to a pipe against ``np.savetxt`` to a pipe, and
``-o`` ``.npy``, ``.npz``, ``.txt`` against ``np.save``, ``np.savez`` and
``np.savetxt`` of ``eyelike.eye(...)``, each run as its own process (its
start and imports included), one after the other, in turns.

    python -m benchmarks.cli                 # the 64 MiB rows
    python -m benchmarks.cli --large         # and the 1 GiB rows, once each

Times are medians over the runs; peak memory is each process's own
maximum resident set (``os.wait4``), the most of its runs. ``np.savetxt``
writes its default format (``%.18e``), the command line each value's
shortest text. The command line's files are made safe on disk before they replace the
target (``fsync``); NumPy's writers leave that to the system.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main", "run"]

# (the eye's arguments, its size): float32, square.
SIZES = {"64 MiB": 4096, "1 GiB": 16384}
# (row, the command line's words, NumPy's call: {n} the size, {path} the file)
ROWS = [
    ("view to a pipe", [], "np.savetxt(sys.stdout.buffer, a)"),
    (".npy", ["-o", "{path}.npy"], "np.save('{path}.npy', a)"),
    (".npz", ["-o", "{path}.npz"], "np.savez('{path}.npz', eye=a)"),
    (".txt", ["-o", "{path}.txt"], "np.savetxt('{path}.txt', a)"),
]


def run(command: list[str]) -> tuple[float, int]:
    """The seconds ``command`` takes and its peak memory in bytes, its
    standard output read (as a pipe's reader does) and dropped."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    while proc.stdout.read(1 << 20):
        pass
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        msg = f"{command} exited with {proc.returncode}"
        raise RuntimeError(msg)
    return seconds, usage.ru_maxrss * 1024  # (kilobytes on Linux)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cli")
    parser.add_argument("--large", action="store_true", help="the 1 GiB rows too")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of each 64 MiB row (3; 1 GiB: 1)"
    )
    parser.add_argument("--dir", help="the folder to write in (the system's temp)")
    args = parser.parse_args(argv)
    sizes = SIZES if args.large else {"64 MiB": SIZES["64 MiB"]}
    print("| output | size | eyelike s | peak MiB | NumPy | NumPy s | peak MiB | x |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        path = str(Path(folder) / "eye")
        for label, n in sizes.items():
            for row, words, call in ROWS:
                ours = [sys.executable, "-m", "eyelike", str(n), "--dtype", "float32"]
                ours += [w.format(path=path) for w in words]
                theirs = [
                    sys.executable,
                    "-c",
                    "import sys, numpy as np, eyelike; "
                    f"a = eyelike.eye({n}, dtype='float32'); {call.format(path=path)}",
                ]
                times: dict[int, list[float]] = {0: [], 1: []}
                peaks: dict[int, int] = {0: 0, 1: 0}
                for _ in range(args.repeat if n == SIZES["64 MiB"] else 1):
                    for who, command in enumerate([ours, theirs]):
                        seconds, peak = run(command)
                        times[who].append(seconds)
                        peaks[who] = max(peaks[who], peak)
                mine, numpy = (statistics.median(times[w]) for w in (0, 1))
                name = call.split("(")[0]
                print(
                    f"| {row} | {label} | {mine:.2f} | {peaks[0] >> 20} | {name} "
                    f"| {numpy:.2f} | {peaks[1] >> 20} | {mine / numpy:.2f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
