"""The GPU table: eyelike on CuPy, torch CUDA and JAX against each library's
own idiom, with each library's ``zeros`` as the limit (a memset: the
bandwidth bound of writing the output). How it times, and why: see
``benchmarks/README.md``."""

from __future__ import annotations

import dataclasses
import importlib
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from .cases import GPU_CASES, GpuCase
from .gpu_cupy import Lib, Peer
from .gpu_libs import libraries
from .gpu_report import line, percent, row, run_cases, text

__all__ = ["run_gpu"]

LATENCY_SAMPLES = 2  # single synchronised calls per peer and round
TARGET_S = 0.004  # GPU time one timing of back-to-back calls should span
MAX_CALLS = 2000
# Outputs that can be alive at once while calls are queued (JAX frees a
# buffer only once its computation is done): bounds the calls per timing.
MAX_QUEUED_BYTES = 16 << 30
HEAT_S = 0.5  # seconds of load before each case (1.5 s before the first)
HEAT_BYTES = 1 << 30


class _Clock:
    """The SM clock through NVML, where the ``pynvml`` module is present."""

    def __init__(self, cp: Any) -> None:
        self.nvml: Any = None
        self.handle: Any = None
        try:
            nvml = importlib.import_module("pynvml")
            nvml.nvmlInit()
            try:
                bus_id = cp.cuda.Device().pci_bus_id
                self.handle = nvml.nvmlDeviceGetHandleByPciBusId(bus_id)
            except Exception:  # the bus id's spelling; one GPU is index 0
                if int(nvml.nvmlDeviceGetCount()) != 1:
                    raise
                self.handle = nvml.nvmlDeviceGetHandleByIndex(0)
            self.max_mhz = int(
                nvml.nvmlDeviceGetMaxClockInfo(self.handle, nvml.NVML_CLOCK_SM)
            )
            self.nvml = nvml
        except Exception:  # no NVML: the rows say None
            self.nvml = None
            self.max_mhz = 0

    def sm_mhz(self) -> int | None:
        if self.nvml is None:
            return None
        try:
            sm = self.nvml.NVML_CLOCK_SM
            return int(self.nvml.nvmlDeviceGetClockInfo(self.handle, sm))
        except Exception:  # a failed read is a missing figure, not an error
            return None


def _heat(cp: Any, seconds: float, clock: _Clock) -> int | None:
    """Keep the GPU busy for ``seconds`` with back-to-back 1 GiB memsets, so
    it reaches full clocks; returns the SM clock read while it was busy."""
    buf = cp.empty(HEAT_BYTES, dtype=cp.uint8)
    stream = cp.cuda.get_current_stream()
    end = time.perf_counter() + seconds
    mhz = None
    while time.perf_counter() < end:
        for _ in range(8):  # ~2 ms of writes queued
            buf.fill(0)
        mhz = clock.sm_mhz()  # read while the writes run
        stream.synchronize()
    del buf
    return mhz


def _calls(peer: Peer, nbytes: int) -> int:
    """Back-to-back calls per timing: about TARGET_S of work."""
    per = peer.lib.per_call(peer.fn, 4)
    calls = math.ceil(TARGET_S / max(per, 1e-7))
    return max(4, min(calls, MAX_CALLS, MAX_QUEUED_BYTES // max(nbytes, 1)))


def _median_ratio(
    times: dict[str, list[float]], peer: str, base: str | None
) -> float | None:
    """Median over rounds of this peer's time over ``base``'s in the same round."""
    if base is None or base not in times:
        return None
    return statistics.median(
        a / b for a, b in zip(times[peer], times[base], strict=True)
    )


def _run_case(
    case: GpuCase,
    libs: list[Lib],
    rng: random.Random,
    sync: Callable[[], None],
    heat: Callable[[float], int | None],
    heat_s: float,
    out_of_time: Callable[[], bool] = lambda: False,
) -> list[dict[str, Any]]:
    """Check, warm up and time every peer of one case; one row per peer.

    ``libs`` are the libraries taking part. The case runs ``case.rounds``
    rounds, or fewer once ``out_of_time()`` says the time limit has come
    (never fewer than one); the rows then say so.
    """
    rows: list[dict[str, Any]] = []
    peers: list[Peer] = []
    for lib in libs:
        reason = lib.skip(case)
        if reason:
            rows.append(row(case, lib, "(not run)", note=reason))
            continue
        try:
            candidates = lib.peers(case)
        except Exception as exc:  # the library cannot make this case at all
            rows.append(row(case, lib, "(peers)", error=text(exc)))
            continue
        for peer in candidates:
            try:
                lib.poison(case.nbytes)
                error = lib.check(peer.fn(), case, peer.role in ("limit", "probe"))
                for _ in range(3):  # warm-up: compiled, pools filled
                    peer.fn()
                sync()
            except Exception as exc:
                error = text(exc)
            if error:
                rows.append(row(case, lib, peer.name, error=error))
            else:
                peers.append(peer)
    if not peers:
        return rows
    calls = {p.name: _calls(p, case.nbytes) for p in peers}
    sync()
    mhz = heat(heat_s)
    times: dict[str, list[float]] = {p.name: [] for p in peers}
    latencies: dict[str, list[float]] = {p.name: [] for p in peers}
    done = 0
    while done < case.rounds and not (done and out_of_time()):
        order = list(peers)
        rng.shuffle(order)
        for peer in order:
            times[peer.name].append(peer.lib.per_call(peer.fn, calls[peer.name]))
            latencies[peer.name].extend(
                peer.lib.latency(peer.fn) for _ in range(LATENCY_SAMPLES)
            )
            sync()  # nothing of this peer still runs when the next one starts
        done += 1
    cut = None
    if done < case.rounds:
        cut = f"{done} of {case.rounds} rounds: the time limit came"
    for peer in peers:
        role_of = {p.role: p.name for p in peers if p.lib is peer.lib}
        per_call = statistics.median(times[peer.name])
        rows.append(
            row(
                case,
                peer.lib,
                peer.name,
                per_call_us=per_call * 1e6,
                latency_us=statistics.median(latencies[peer.name]) * 1e6,
                GB_per_s=case.nbytes / per_call / 1e9,
                x_limit=_median_ratio(times, peer.name, role_of.get("limit")),
                # Throughput as a share of the library's zeros of this output
                # (100: memset speed, the bandwidth limit of the write).
                pct_of_zeros=percent(
                    _median_ratio(times, peer.name, role_of.get("limit"))
                ),
                x_eyelike=_median_ratio(times, peer.name, role_of.get("eyelike")),
                calls=calls[peer.name],
                rounds=done,
                sm_clock_mhz=mhz,
                note=cut,
            )
        )
    return rows


def run_gpu(
    rounds: int | None = None,
    seed: int | None = None,
    *,
    deadline: float | None = None,
    on_case: Callable[[list[dict[str, Any]]], None] | None = None,
    cases: list[GpuCase] | None = None,
) -> list[dict[str, Any]]:
    """Check and time every peer on every case; one row per (case, peer).

    A peer or case that fails has a row with its ``error`` and is not
    timed; the others still are. ``rounds`` overrides every case's own.
    ``deadline`` (a `time.monotonic` time): no case starts once too little
    time is left for it, and a running case's rounds stop there; the cases
    not run have a row per library with a note saying so. ``on_case(rows
    so far)`` is called after every case, and its rows are printed to
    stderr under a progress line, so that a run killed later still leaves
    every finished case behind.
    """
    import cupy as cp

    seed = random.randrange(2**32) if seed is None else seed
    rng = random.Random(seed)
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    libs, missing = libraries(cp)
    clock = _Clock(cp)

    def sync() -> None:
        # One context for all three libraries: this waits for all their work.
        cp.cuda.Device().synchronize()

    def heat(seconds: float) -> int | None:
        return _heat(cp, seconds, clock)

    heat(3 * HEAT_S)  # the first ramp from idle clocks
    meta = {
        "device": name,
        "max_sm_clock_mhz": clock.max_mhz or None,
        "seed": seed,
        "not_run": "; ".join(missing) or None,
    }

    def taking_part(case: GpuCase) -> list[Lib]:
        return [lib for lib in libs if lib.name in case.libs]

    def run_case(
        case: GpuCase, out_of_time: Callable[[], bool]
    ) -> list[dict[str, Any]]:
        if rounds is not None:
            case = dataclasses.replace(case, rounds=rounds)
        try:
            got = _run_case(
                case, taking_part(case), rng, sync, heat, HEAT_S, out_of_time
            )
        except Exception as exc:  # keep the other cases' figures
            got = [row(case, libs[0], "(case)", error=text(exc))]
        for lib in libs:
            lib.free_memory()
        return [{**meta, **r} for r in got]

    def not_run(case: GpuCase, note: str) -> list[dict[str, Any]]:
        return [
            {**meta, **row(case, lib, "(not run)", note=note)}
            for lib in taking_part(case)
        ]

    rows: list[dict[str, Any]] = []

    def done(case: GpuCase, case_rows: list[dict[str, Any]], seconds: float) -> None:
        rows.extend(case_rows)
        errors = sum(r["error"] is not None for r in case_rows)
        lines = [
            f"benchmarks: {case.name}: {len(case_rows)} rows, {errors} errors, "
            f"{seconds:.1f} s",
            *(f"  {line(r)}" for r in case_rows),
        ]
        print("\n".join(lines), file=sys.stderr, flush=True)
        if on_case is not None:
            on_case(rows)

    run_cases(
        GPU_CASES if cases is None else cases,
        run_case,
        not_run,
        deadline=deadline,
        on_case=done,
    )
    return rows
