"""Where the time of a per-matrix ``k`` goes on CuPy: eyelike's whole call
beside its kernel alone (the backend's ``fill`` with ``k`` already in the
kernel's index type, contiguous), the kernel with every ``k`` equal, the
pass over ``k`` before it (the backend's ``_clamp``), and ``cupy.zeros``
(the memory's limit for the output alone); and the host's time per call. CUDA events
around 20 back-to-back calls, the median of 9 rounds, per case. Each
output is checked against the rule before it is timed. Last, where the
host's time of one per-matrix call goes: cProfile over 200 calls, the top
25 functions by cumulative time.

Run where CuPy has a GPU: ``python scripts/probe_per_matrix.py``.
Development tool, not a benchmark (``python -m benchmarks`` is).
"""

from __future__ import annotations

import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import cupy
import numpy as np

import eyelike
from eyelike._backends import backend_of_namespace
from eyelike._backends.cupy import fill, vector_from
from eyelike._backends.cupy.planning import plan

CASES = [  # (batch, R, C, dtype, k of matrix b)
    (16384, 64, 64, "float32", lambda b: b % 129 - 64),
    (16777216, 4, 4, "uint8", lambda b: b % 9 - 4),
    (8388608, 3, 3, "float32", lambda b: b % 7 - 3),
]


def per_call(fn: Callable[[], Any], calls: int = 20, rounds: int = 9) -> float:
    """Microseconds per call: CUDA events around ``calls`` calls."""
    fn()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(rounds):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e3 / calls)
    return statistics.median(times)


def host_per_call(fn: Callable[[], Any], calls: int = 20, rounds: int = 9) -> float:
    """Microseconds of the host's time per call: the host clock around
    ``calls`` calls, not waiting for the GPU (its launch queue holds them)."""
    times = []
    for _ in range(rounds):
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) * 1e6 / calls)
    cupy.cuda.Device().synchronize()
    return statistics.median(times)


def check(got: Any, k: Any, shape: tuple[int, ...]) -> None:
    """Fail unless ``got`` is the eye of per-matrix ``k`` (on the GPU)."""
    rows = cupy.arange(shape[-2])[:, None]
    cols = cupy.arange(shape[-1])
    want = (cols - rows) == cupy.asarray(k)[:, None, None]
    if not bool(cupy.all((got != 0) == want)) or not bool(
        cupy.all((got == 0) | (got == 1))
    ):
        sys.exit(f"wrong output for {shape}")


def run_case(batch: int, n_rows: int, n_cols: int, dtype: str, rule: Any) -> None:
    """The rows of one case, printed as they end."""
    shape = (batch, n_rows, n_cols)
    k64 = rule(cupy.arange(batch, dtype=cupy.int64))
    out = cupy.empty(shape, dtype=dtype)
    launches = plan(
        shape,
        None,
        out.itemsize,
        contiguous=True,
        address=out.data.ptr,
        vector_from=vector_from(),
    )
    index = np.int64 if launches[0].wide else np.int32
    kk = cupy.ascontiguousarray(k64.astype(index))
    kk0 = cupy.zeros_like(kk)
    backend = backend_of_namespace(cupy)
    rows: dict[str, Callable[[], Any]] = {
        "cupy.zeros (limit)": lambda: cupy.zeros(shape, dtype=dtype),
        "eyelike.eye (k: CuPy int64)": lambda: eyelike.eye(
            n_rows, n_cols, batch_shape=batch, k=k64, dtype=dtype, xp=cupy
        ),
        "eyelike.eye (out=, k: CuPy int64)": lambda: eyelike.eye(
            n_rows, n_cols, batch_shape=batch, k=k64, out=out
        ),
        f"kernel alone (fill, k {index.__name__})": lambda: fill(out, kk, launches),
        "kernel alone, every k 0": lambda: fill(out, kk0, launches),
        "k pass alone (eyelike's _clamp)": lambda: backend._clamp(
            k64, n_rows, n_cols, None
        ),
        "k as clip, then astype (two passes)": lambda: cupy.ascontiguousarray(
            cupy.clip(k64, -n_rows, n_cols).astype(index)
        ),
    }
    check(rows["eyelike.eye (k: CuPy int64)"](), k64, shape)
    fill(out, kk, launches)
    check(out, k64, shape)
    name = f"{batch}x{n_rows}x{n_cols} {dtype}"
    host = host_per_call(rows["eyelike.eye (k: CuPy int64)"])
    print(f"{name:34s} {'eyelike.eye: host time per call':44s} {host:9.2f}")
    base = 0.0
    for row, fn in rows.items():
        t = per_call(fn)
        base = base or t
        print(f"{name:34s} {row:44s} {t:9.2f} {t / base:8.2f}", flush=True)
    # The kernel reads k as well as writing the output: at zeros' rate, both
    # take this long.
    floor = base * (out.nbytes + kk.nbytes) / out.nbytes
    print(
        f"{name:34s} output {out.nbytes >> 20} MiB + k {kk.nbytes >> 20} MiB: "
        f"{floor:.2f} us at zeros' rate",
        flush=True,
    )


def profile_host(batch: int, n_rows: int, n_cols: int, dtype: str, rule: Any) -> None:
    """cProfile over 200 per-matrix calls of ``eyelike.eye`` (k: CuPy int64),
    the top 25 by cumulative time: where a call's host time goes."""
    k64 = rule(cupy.arange(batch, dtype=cupy.int64))

    def call() -> Any:
        return eyelike.eye(
            n_rows, n_cols, batch_shape=batch, k=k64, dtype=dtype, xp=cupy
        )

    for _ in range(20):  # warm: kernels compiled, caches filled
        call()
    cupy.cuda.Device().synchronize()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(200):
        call()
    profiler.disable()
    cupy.cuda.Device().synchronize()
    print(f"\nhost profile: 200 calls, {batch}x{n_rows}x{n_cols} {dtype}")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(25)


def main() -> None:
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"cupy {cupy.__version__}, {name}")
    print(f"{'case':34s} {'row':44s} {'us':>9s} {'x zeros':>8s}")
    for case in CASES:
        run_case(*case)
        cupy.get_default_memory_pool().free_all_blocks()
    profile_host(*CASES[0])


if __name__ == "__main__":
    main()
