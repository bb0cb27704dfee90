"""``eyelike bench --backend cupy``: the CuPy kernel against its GPU peers.

Timed with CUDA events on the current stream, median of many runs after a
warm-up, every output checked on the device before it is timed. Ratios are
to ``cupy.zeros`` of the same shape (a memset: the bandwidth limit of
writing that many bytes), and to eyelike.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import numpy as np

from ._core import eye

__all__ = ["run_gpu"]

# (batch, rows, cols, dtype): tiny, the batched peer case, and >= 256 MiB.
GPU_CASES: list[tuple[tuple[int, ...], int, int, str]] = [
    ((), 3, 3, "float32"),
    ((65536,), 64, 64, "float32"),
    ((65536,), 64, 64, "bool"),
    ((65536,), 64, 64, "uint8"),
    ((32768,), 64, 64, "float16"),
    ((16384,), 64, 64, "float64"),
    ((), 16384, 16384, "float32"),
]


def _time_events(cp: Any, fn: Callable[[], Any], runs: int) -> float:
    """Median milliseconds of ``fn`` between CUDA events on the current stream."""
    fn()
    cp.cuda.get_current_stream().synchronize()
    samples = []
    for _ in range(runs):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        r = fn()
        stop.record()
        stop.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, stop))
        del r
    return float(statistics.median(samples))


def _peers(cp: Any, shape: tuple[int, ...], k: int, dtype: str) -> dict[str, Any]:
    n_rows, n_cols = shape[-2:]
    batch = shape[:-2]
    peers: dict[str, Callable[[], Any]] = {
        "eyelike": lambda: eye(
            n_rows, n_cols, k=k, batch_shape=batch, dtype=dtype, xp=cp
        ),
        "cupy.zeros (limit)": lambda: cp.zeros(shape, dtype),
    }
    if batch:
        peers["cupy.eye+broadcast copy"] = lambda: cp.broadcast_to(
            cp.eye(n_rows, n_cols, k, dtype), shape
        ).copy()
    else:
        peers["cupy.eye"] = lambda: cp.eye(n_rows, n_cols, k, dtype)
    try:
        import torch

        if torch.cuda.is_available() and k == 0 and n_rows == n_cols:
            tdt = getattr(torch, dtype)
            peers["torch.eye.expand.clone"] = lambda: (
                torch.eye(n_rows, dtype=tdt, device="cuda").expand(shape).clone()
            )
    except ImportError:
        pass
    return peers


def run_gpu(runs: int = 50) -> list[dict[str, Any]]:
    """Time every GPU peer on every case; returns one row per (case, peer)."""
    import cupy as cp

    rows: list[dict[str, Any]] = []
    device = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = (
        device["name"].decode() if isinstance(device["name"], bytes) else device["name"]
    )
    for batch, n_rows, n_cols, dtype in GPU_CASES:
        shape = (*batch, n_rows, n_cols)
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        expected = cp.broadcast_to(cp.eye(n_rows, n_cols, 0, dtype), shape)
        times: dict[str, float] = {}
        for peer, fn in _peers(cp, shape, 0, dtype).items():
            got = fn()
            if not peer.startswith("cupy.zeros"):
                got = cp.asarray(got) if not hasattr(got, "get") else got
                if not bool(cp.array_equal(got, expected)):
                    msg = f"{peer} gave a wrong result on {shape} {dtype}"
                    raise AssertionError(msg)
            del got
            tiny = nbytes < 1 << 20
            times[peer] = _time_events(cp, fn, runs * (4 if tiny else 1))
        del expected
        cp.get_default_memory_pool().free_all_blocks()
        limit = times["cupy.zeros (limit)"]
        rows.extend(
            {
                "device": name,
                "case": f"{'x'.join(map(str, shape))} {dtype}",
                "peer": peer,
                "median_ms": ms,
                "GB_per_s": nbytes / (ms * 1e-3) / 1e9,
                "x_limit_time": ms / limit,
                "x_eyelike": ms / times["eyelike"],
            }
            for peer, ms in times.items()
        )
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The GPU rows as a fixed-width text table."""
    lines = [f"device: {rows[0]['device']}" if rows else "no rows"]
    lines.append(
        f"{'case':<26} {'peer':<26} {'median':>11} {'GB/s':>8} "
        f"{'x zeros':>8} {'x eyelike':>9}"
    )
    lines.extend(
        f"{r['case']:<26} {r['peer']:<26} {r['median_ms']:>8.4f} ms "
        f"{r['GB_per_s']:>8.1f} {r['x_limit_time']:>8.2f} {r['x_eyelike']:>9.2f}"
        for r in rows
    )
    return "\n".join(lines)
