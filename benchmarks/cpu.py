"""The CPU table: every peer of a case checked against NumPy, then timed
side by side with the others, round by round in a new random order each
round; times are medians over the rounds, and ratios are medians of each
round's ratio, so the machine's drifting load cancels out. Ratios are to
``limit_alloc`` (a fresh ``np.empty`` filled with zeros: the cost of handing
out and writing new memory) or, for ``out=`` cases, to ``limit_touched``
(``fill(0)`` of an already-touched buffer, one core)."""

from __future__ import annotations

import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from eyelike._backends import backend_of_array

from . import cpu_peers, cpu_per_matrix
from .cases import CpuCase
from .cpu_peers import Peer

__all__ = ["run", "table"]


def _touch(a: np.ndarray[Any, Any]) -> None:
    # Write every page so lazily zeroed memory is not counted as free.
    flat = a.reshape(-1)
    flat[:: max(1, 4096 // a.itemsize)] += 0


def _to_numpy(result: Any) -> np.ndarray[Any, Any] | None:
    if result is None:
        return None
    return backend_of_array(result, "result").to_numpy(result)


def _sample(fn: Peer, inner: int) -> float:
    """Seconds per call of one timed sample (``inner`` calls in a loop)."""
    t0 = time.perf_counter()
    for _ in range(inner):
        r = fn()
    seconds = (time.perf_counter() - t0) / inner
    del r
    return seconds


def _time_side_by_side(
    peers: Sequence[Peer], tiny: bool, budget: float
) -> list[list[float]]:
    """Seconds per call of each peer, one sample a round.

    Every round runs each peer in turn (in a new random order), so a burst
    of noise on this shared machine (another process, the host reclaiming
    memory, another tenant's memory traffic) lands on all peers alike
    instead of on whichever was being timed, and the samples of one round
    can be compared pairwise. Within its turn a peer first runs once
    untimed: that call absorbs what the previous peer left behind (the
    allocator's recycled or trimmed memory, caches), so the timed call sees
    the steady state a caller in a loop sees.
    """
    inner = 200 if tiny else 1
    rng = random.Random(0)
    order = list(range(len(peers)))
    samples: list[list[float]] = [[] for _ in peers]
    start = time.perf_counter()
    rounds = 0
    while rounds < 7 or (
        time.perf_counter() - start < budget * len(peers) and rounds < 50
    ):
        rng.shuffle(order)
        for j in order:
            _sample(peers[j], inner)
            samples[j].append(_sample(peers[j], inner))
        rounds += 1
    return samples


def _paired(mine: list[float], theirs: list[float]) -> float:
    """Median over rounds of the ratio of two peers' samples of one round."""
    return statistics.median(a / b for a, b in zip(mine, theirs, strict=True))


def _extra_memory(fn: Peer, nbytes: int) -> int:
    tracemalloc.start()
    try:
        r = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del r
    return max(0, peak - nbytes)


def run(
    cases: Sequence[CpuCase], budget: float, progress: bool, others: bool = True
) -> list[dict[str, Any]]:
    """Time every peer on every case; returns one row per (case, peer).

    ``others=False`` times eyelike against NumPy and the limits only.
    """
    plan: list[tuple[CpuCase, dict[str, Peer]]] = []
    skipped: list[str] = []
    for c in cases:
        buf = np.ones(c.shape, c.np_dtype) if c.out else None
        peers = cpu_peers._numpy_peers(c, buf)
        extras = (
            cpu_peers._torch_peers,
            cpu_peers._jax_peers,
            cpu_peers._openvino_peers,
            cpu_peers._onnxruntime_peers,
            cpu_peers._on_library_peers,
            cpu_per_matrix._per_matrix_peers,
        )
        for extra in extras if others else ():
            try:
                peers.update(extra(c))
            except Exception as exc:  # a peer lacking the case is skipped
                skipped.append(f"{extra.__name__[1:-6]} on {c.name}: {exc}"[:160])
        plan.append((c, peers))
    bar: Any = None
    if progress:
        try:
            from tqdm import tqdm

            total = sum(len(p) for _, p in plan)
            bar = tqdm(total=total, desc="benchmarks", file=sys.stderr)
        except ImportError:
            bar = None
    rows: list[dict[str, Any]] = []
    for c, peers in plan:
        rows += _run_case(c, peers, budget)
        if bar is not None:
            bar.update(len(peers))
    if bar is not None:
        bar.close()
    for note in skipped:
        print(f"skipped: {note}", file=sys.stderr)
    return rows


def _run_case(
    c: CpuCase, peers: dict[str, Peer], budget: float
) -> list[dict[str, Any]]:
    """Check every peer's output, then time them all side by side."""
    expected = c.expected()
    timed: list[Peer] = []
    for name, fn in peers.items():
        if not name.startswith("limit"):
            got = _to_numpy(fn())
            if got is None or not np.array_equal(got, expected):
                msg = f"{name} gave a wrong result on {c.name}"
                raise AssertionError(msg)
        if c.touch:

            def touched(fn: Peer = fn) -> Any:
                r = fn()
                a = _to_numpy(r)
                if a is not None and a.flags.writeable:
                    _touch(a)
                return r

            timed.append(touched)
        else:
            timed.append(fn)
    samples = dict(
        zip(peers, _time_side_by_side(timed, c.nbytes < 1 << 16, budget), strict=True)
    )
    limit = samples.get("limit_touched", samples.get("limit_alloc"))
    rows = []
    for name, fn in peers.items():
        seconds = statistics.median(samples[name])
        row = {
            "case": c.name,
            "peer": name,
            "median_s": seconds,
            "GB_per_s": c.nbytes / seconds / 1e9,
            # Ratios pair the samples of each round: drift between rounds
            # (the machine's load) cancels out.
            "x_limit": None if limit is None else _paired(samples[name], limit),
            "x_eyelike": _paired(samples[name], samples["eyelike"]),
            # eyelike on another library against that library's own idiom.
            # (`LIB: eyelike` and `LIB: eyelike.eye_like` both pair with
            # `LIB: idiom`.)
            "x_idiom": _paired(samples[name], samples[partner])
            if ": eyelike" in name
            and (partner := name.split(": ")[0] + ": idiom") in samples
            else None,
            "rounds": len(samples[name]),
            **{f"case_{k}": v for k, v in asdict(c).items()},
        }
        if name == "eyelike" and c.nbytes >= 1 << 20:
            row["extra_bytes"] = _extra_memory(fn, 0 if c.out else c.nbytes)
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"{'case':<34} {'peer':<30} {'median':>10} {'GB/s':>7} "
        f"{'x limit':>8} {'x eyelike':>9} {'x idiom':>8}"
    ]
    for r in rows:
        t = r["median_s"]
        shown = f"{t * 1e6:.2f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms"
        lim = "" if r["x_limit"] is None else f"{r['x_limit']:.2f}"
        idiom = "" if r.get("x_idiom") is None else f"{r['x_idiom']:.2f}"
        lines.append(
            f"{r['case']:<34} {r['peer']:<30} {shown:>10} {r['GB_per_s']:>7.2f} "
            f"{lim:>8} {r['x_eyelike']:>9.2f} {idiom:>8}"
        )
    return "\n".join(lines)
