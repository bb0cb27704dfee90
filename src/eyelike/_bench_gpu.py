"""``eyelike bench --backend cupy``: eyelike on the GPU against each GPU
library's own idiom, on CuPy, torch CUDA and JAX, with each library's
``zeros`` as the limit (a memset: the bandwidth bound of writing the output).

How it times, and why:

* Per call: ``calls`` back-to-back calls between one pair of events recorded
  on the stream the work runs on, divided by ``calls`` (chosen so that one
  timing spans about ``TARGET_S`` of GPU work). The host's share of a call
  (argument checks, the launch) then overlaps the GPU's work on the calls
  before it, as in a program that queues work; one call between two events
  on an idle GPU would add those 15-25 us to a 65 us write of 256 MiB.
* Latency, reported apart: one call, then a synchronize, by the host clock
  (median): what a lone call costs, host work included.
* CuPy is timed with CuPy events on CuPy's current stream, torch with torch
  events on torch's current stream: neither relies on the two sharing the
  legacy default stream. JAX runs on streams of its own, so it is timed by
  the host clock around the calls and ``block_until_ready`` of the last
  (XLA runs one device's work in order), with preallocation off so that it
  does not hold 75% of the GPU's memory while the others run.
* Streams checked: eyelike's CuPy kernel and its torch path are captured in
  a CUDA graph on a side stream made current. Their output must be untouched
  after the capture and right once the graph has run: the work goes to the
  current stream, the one the events are on. The result is in every row.
* Warm-up: every peer runs before it is timed (compiling kernels, filling
  memory pools), and before each case the GPU is kept busy for ``HEAT_S``
  seconds, since it idles at a few hundred MHz and needs load to reach full
  clocks; the SM clock read during that load is in every row.
* Order: in each of ``ROUNDS`` rounds a case's peers, all libraries, run in
  a new random order. Times are medians over rounds, ratios medians of each
  round's ratio, so drift cancels and no peer always pays a clock ramp.
* Correct first: each peer's output is checked on the device before it is
  timed (type, shape, dtype, on the GPU; exactly as many non-zeros as the
  diagonal has and every diagonal element 1, or all zeros for the limit),
  with the memory it will likely reuse poisoned first where the library
  allows. A peer that fails a check is not timed: its row carries the
  error, and the run goes on.
"""

from __future__ import annotations

import importlib
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import eye, eye_like

__all__ = ["run_gpu", "table"]

ROUNDS = 15  # timings per peer and case; medians over these
LATENCY_SAMPLES = 2  # single synchronised calls per peer and round
TARGET_S = 0.004  # GPU time one timing of back-to-back calls should span
MAX_CALLS = 2000
# Outputs that can be alive at once while calls are queued (JAX frees a
# buffer only once its computation is done): bounds the calls per timing.
MAX_QUEUED_BYTES = 16 << 30
HEAT_S = 0.5  # seconds of load before each case (1.5 s before the first)
HEAT_BYTES = 1 << 30
SENTINEL = 7  # poison: a value no eye contains


@dataclass(frozen=True)
class Case:
    """One output shape and dtype."""

    batch: tuple[int, ...]
    n: int
    dtype: str

    @property
    def shape(self) -> tuple[int, ...]:
        return (*self.batch, self.n, self.n)

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * np.dtype(self.dtype).itemsize

    @property
    def ones(self) -> int:
        """How many elements of the output are 1."""
        return math.prod(self.batch) * self.n

    @property
    def name(self) -> str:
        return f"{'x'.join(map(str, self.shape))} {self.dtype}"


# Tiny (latency-bound), the 64x64 batch in several dtypes (256 MiB to 1 GiB),
# and one 1 GiB matrix.
CASES = [
    Case((), 3, "float32"),
    Case((65536,), 64, "float32"),
    Case((65536,), 64, "bool"),
    Case((65536,), 64, "uint8"),
    Case((32768,), 64, "float16"),
    Case((16384,), 64, "float64"),
    Case((), 16384, "float32"),
]


class Lib:
    """How one library's peers are checked and timed."""

    name = ""
    timing = ""
    stream_check = "not checked"

    def per_call(self, fn: Callable[[], Any], calls: int) -> float:
        """Seconds per call of ``calls`` back-to-back calls."""
        raise NotImplementedError

    def latency(self, fn: Callable[[], Any]) -> float:
        """Seconds from one call to its result being ready."""
        raise NotImplementedError

    def poison(self, nbytes: int) -> None:
        """Leave ``nbytes`` of SENTINEL bytes where the next output may land."""

    def check(self, got: Any, case: Case, zeros: bool) -> str:
        """Why ``got`` is not exactly the case's eye (or, for the limit, all
        zeros) on the GPU; "" if it is."""
        raise NotImplementedError

    def skip(self, case: Case) -> str:
        """Why this library does not take part in ``case``, or ""."""
        return ""

    def peers(self, case: Case) -> list[Peer]:
        """The ways to make ``case``'s output, with eyelike and the limit."""
        raise NotImplementedError

    def free_memory(self) -> None:
        """Hand the library's cached GPU memory back between cases."""


@dataclass(frozen=True)
class Peer:
    """One way to make a case's output, on one library."""

    lib: Lib
    name: str
    fn: Callable[[], Any]
    role: str = "idiom"  # "eyelike", "limit" or "idiom"


def _count_error(
    shape: tuple[int, ...],
    dtype: str,
    nonzero: int,
    diagonal_ones: bool,
    c: Case,
    zeros: bool,
) -> str:
    if shape != c.shape or dtype != c.dtype:
        return f"got shape {shape} dtype {dtype}"
    if zeros:  # the limit peer: a memset to 0
        return "" if nonzero == 0 else f"{nonzero} non-zeros in zeros"
    # Exactly c.ones non-zeros and all c.ones diagonal elements equal to 1:
    # then the non-zeros are the diagonal's ones, and the rest is 0.
    if nonzero != c.ones or not diagonal_ones:
        return f"{nonzero} non-zeros (want {c.ones}), diagonal all 1: {diagonal_ones}"
    return ""


class CuPyLib(Lib):
    name = "cupy"

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        ptr = int(cp.cuda.get_current_stream().ptr)
        self.timing = f"CuPy events on CuPy's current stream ({ptr:#x})"
        self.stream_check = self._stream_check()

    def per_call(self, fn: Callable[[], Any], calls: int) -> float:
        stream = self.cp.cuda.get_current_stream()
        start, stop = self.cp.cuda.Event(), self.cp.cuda.Event()
        start.record(stream)
        for _ in range(calls):
            fn()
        stop.record(stream)
        stop.synchronize()
        return float(self.cp.cuda.get_elapsed_time(start, stop)) / 1e3 / calls

    def latency(self, fn: Callable[[], Any]) -> float:
        stream = self.cp.cuda.get_current_stream()
        t0 = time.perf_counter()
        fn()
        stream.synchronize()
        return time.perf_counter() - t0

    def poison(self, nbytes: int) -> None:
        # Freed to CuPy's pool: the next allocation of this size reuses it.
        buf = self.cp.empty(nbytes, dtype=self.cp.uint8)
        buf.fill(SENTINEL)
        del buf

    def free_memory(self) -> None:
        self.cp.get_default_memory_pool().free_all_blocks()

    def check(self, got: Any, case: Case, zeros: bool) -> str:
        cp = self.cp
        if not isinstance(got, cp.ndarray):
            return f"not a CuPy array: {type(got).__name__}"
        nonzero = int(cp.count_nonzero(got))
        ones = bool((cp.diagonal(got, 0, -2, -1) == 1).all())
        return _count_error(got.shape, got.dtype.name, nonzero, ones, case, zeros)

    def peers(self, case: Case) -> list[Peer]:
        cp, n, batch, dt, shape = self.cp, case.n, case.batch, case.dtype, case.shape
        x = cp.empty(shape, dt)  # eye_like's template; its values are never read
        peers = [
            Peer(
                self,
                "eyelike",
                lambda: eye(n, batch_shape=batch, dtype=dt, xp=cp),
                "eyelike",
            ),
            Peer(self, "eyelike.eye_like", lambda: eye_like(x)),
            Peer(self, "cupy.zeros (limit)", lambda: cp.zeros(shape, dt), "limit"),
        ]
        if not batch:
            peers.append(Peer(self, "cupy.eye", lambda: cp.eye(n, dtype=dt)))
            return peers

        def zeros_diagonal() -> Any:
            a = cp.zeros(shape, dt)
            a.diagonal(0, -2, -1)[...] = 1
            return a

        peers.append(Peer(self, "cupy.zeros+diagonal fill", zeros_diagonal))
        peers.append(
            Peer(
                self,
                "cupy.eye+broadcast copy",
                lambda: cp.broadcast_to(cp.eye(n, dtype=dt), shape).copy(),
            )
        )
        return peers

    def _stream_check(self) -> str:
        """Capture eyelike's kernel on a non-blocking side stream.

        A launch on that (current) stream is recorded, not run; a launch on
        any other stream runs at once. So the output must still be all
        SENTINEL after the capture and a device-wide synchronize, and the
        eye once the graph has run.
        """
        cp = self.cp
        try:
            side = cp.cuda.Stream(non_blocking=True)
            with side:
                out = cp.full((4, 64, 64), SENTINEL, dtype=cp.int32)
                eye(64, batch_shape=4, out=out)  # compile outside the capture
                out.fill(SENTINEL)
                side.synchronize()
                side.begin_capture()
                try:
                    eye(64, batch_shape=4, out=out)
                finally:
                    graph = side.end_capture()
                cp.cuda.Device().synchronize()
                if not bool((out == SENTINEL).all()):
                    return "FAILED: eyelike's kernel ran outside the current stream"
                graph.launch(side)
                side.synchronize()
                want = cp.broadcast_to(cp.eye(64, dtype=cp.int32), out.shape)
                if not bool(cp.array_equal(out, want)):
                    return "FAILED: eyelike's kernel is missing from the capture"
        except Exception as exc:  # reported in the rows, never fatal
            return f"not checked: {type(exc).__name__}: {exc}"
        return "ok: eyelike's kernel runs on the current stream (graph capture)"


class TorchLib(Lib):
    name = "torch"

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        handle = int(torch.cuda.current_stream().cuda_stream)
        self.timing = f"torch events on torch's current stream ({handle:#x})"
        self.stream_check = self._stream_check()

    def per_call(self, fn: Callable[[], Any], calls: int) -> float:
        cuda = self.torch.cuda
        stream = cuda.current_stream()
        start = cuda.Event(enable_timing=True)
        stop = cuda.Event(enable_timing=True)
        start.record(stream)
        for _ in range(calls):
            fn()
        stop.record(stream)
        stop.synchronize()
        return float(start.elapsed_time(stop)) / 1e3 / calls

    def latency(self, fn: Callable[[], Any]) -> float:
        stream = self.torch.cuda.current_stream()
        t0 = time.perf_counter()
        fn()
        stream.synchronize()
        return time.perf_counter() - t0

    def poison(self, nbytes: int) -> None:
        # Freed to torch's caching allocator: reused for the next same size.
        buf = self.torch.full(
            (nbytes,), SENTINEL, dtype=self.torch.uint8, device="cuda"
        )
        del buf

    def free_memory(self) -> None:
        self.torch.cuda.empty_cache()

    def check(self, got: Any, case: Case, zeros: bool) -> str:
        torch = self.torch
        if not isinstance(got, torch.Tensor) or not got.is_cuda:
            where = getattr(got, "device", "")
            return f"not a CUDA tensor: {type(got).__name__} {where}"
        nonzero = int(torch.count_nonzero(got).item())
        ones = bool((got.diagonal(0, -2, -1) == 1).all().item())
        dtype = str(got.dtype).removeprefix("torch.")
        return _count_error(tuple(got.shape), dtype, nonzero, ones, case, zeros)

    def peers(self, case: Case) -> list[Peer]:
        torch, n, batch, shape = self.torch, case.n, case.batch, case.shape
        dt = getattr(torch, case.dtype)
        x = torch.empty(shape, dtype=dt, device="cuda")  # eye_like's template
        peers = [
            Peer(
                self,
                "eyelike (xp=torch)",
                lambda: eye(
                    n, batch_shape=batch, dtype=case.dtype, xp=torch, device="cuda"
                ),
                "eyelike",
            ),
            Peer(self, "eyelike.eye_like (torch)", lambda: eye_like(x)),
            Peer(
                self,
                "torch.zeros (limit)",
                lambda: torch.zeros(shape, dtype=dt, device="cuda"),
                "limit",
            ),
        ]
        if not batch:
            peers.append(
                Peer(self, "torch.eye", lambda: torch.eye(n, dtype=dt, device="cuda"))
            )
            return peers

        def zeros_diagonal() -> Any:
            t = torch.zeros(shape, dtype=dt, device="cuda")
            t.diagonal(0, -2, -1).fill_(1)
            return t

        peers.append(Peer(self, "torch.zeros+diagonal.fill_", zeros_diagonal))
        peers.append(
            Peer(
                self,
                "torch.eye.expand.clone",
                lambda: torch.eye(n, dtype=dt, device="cuda").expand(shape).clone(),
            )
        )
        return peers

    def _stream_check(self) -> str:
        """Capture eyelike's torch path with ``torch.cuda.graph``, which makes
        its capture stream current: work elsewhere either errors (global
        capture mode) or is missing from the graph, so the output, reset to
        SENTINEL after the capture, is not the eye after a replay."""
        torch = self.torch
        try:
            x = torch.empty((4, 64, 64), dtype=torch.int32, device="cuda")
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # warm up off the default stream
                eye_like(x)
                eye(64, batch_shape=4, dtype="int32", xp=torch, device="cuda")
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                got = eye(64, batch_shape=4, dtype="int32", xp=torch, device="cuda")
            torch.cuda.synchronize()
            got.fill_(SENTINEL)
            torch.cuda.synchronize()
            graph.replay()
            torch.cuda.synchronize()
            want = torch.eye(64, dtype=torch.int32, device="cuda").expand(4, 64, 64)
            if not torch.equal(got, want):
                return "FAILED: eyelike's torch work is missing from the capture"
        except Exception as exc:  # reported in the rows, never fatal
            return f"not checked: {type(exc).__name__}: {exc}"
        return "ok: eyelike's torch work runs on the current stream (graph capture)"


class JaxLib(Lib):
    name = "jax"
    timing = "host clock around the calls, block_until_ready on the last"
    stream_check = "n/a: JAX's own streams; block_until_ready waits for the work"

    def __init__(self, jax: Any) -> None:
        import jax.numpy as jnp

        self.jax, self.jnp = jax, jnp

    def per_call(self, fn: Callable[[], Any], calls: int) -> float:
        t0 = time.perf_counter()
        result = None
        for _ in range(calls):
            result = fn()
        assert result is not None
        result.block_until_ready()
        return (time.perf_counter() - t0) / calls

    def latency(self, fn: Callable[[], Any]) -> float:
        t0 = time.perf_counter()
        fn().block_until_ready()
        return time.perf_counter() - t0

    def check(self, got: Any, case: Case, zeros: bool) -> str:
        jnp = self.jnp
        if not isinstance(got, self.jax.Array):
            return f"not a JAX array: {type(got).__name__}"
        platforms = {d.platform for d in got.devices()}
        if platforms != {"gpu"}:
            return f"on {sorted(platforms)}, not the GPU"
        nonzero = int(jnp.count_nonzero(got))
        ones = bool(jnp.all(jnp.diagonal(got, 0, -2, -1) == 1))
        shape, dtype = tuple(got.shape), str(got.dtype)
        return _count_error(shape, dtype, nonzero, ones, case, zeros)

    def skip(self, case: Case) -> str:
        if np.dtype(case.dtype).itemsize == 8 and not self.jax.config.jax_enable_x64:
            return f"{case.dtype} needs jax_enable_x64 (JAX would make 32-bit)"
        return ""

    def peers(self, case: Case) -> list[Peer]:
        jnp, n, batch, dt, shape = self.jnp, case.n, case.batch, case.dtype, case.shape
        x = jnp.zeros(shape, dt)  # eye_like's template
        peers = [
            Peer(
                self,
                "eyelike (xp=jax.numpy)",
                lambda: eye(n, batch_shape=batch, dtype=dt, xp=jnp),
                "eyelike",
            ),
            Peer(self, "eyelike.eye_like (jax)", lambda: eye_like(x)),
            Peer(self, "jnp.zeros (limit)", lambda: jnp.zeros(shape, dt), "limit"),
        ]
        if batch:
            peers.append(
                Peer(
                    self,
                    "jnp.broadcast_to(jnp.eye)",
                    lambda: jnp.broadcast_to(jnp.eye(n, dtype=dt), shape),
                )
            )
        else:
            peers.append(Peer(self, "jnp.eye", lambda: jnp.eye(n, dtype=dt)))
        return peers


def _libraries(cp: Any) -> tuple[list[Lib], list[str]]:
    """The GPU libraries present, and why each absent one is absent."""
    libs: list[Lib] = [CuPyLib(cp)]
    missing = []
    try:
        import torch

        if torch.cuda.is_available():
            libs.append(TorchLib(torch))
        else:
            missing.append("torch: torch.cuda.is_available() is False")
    except Exception as exc:  # not installed, or broken: the CuPy rows still run
        missing.append(f"torch: {_text(exc)}")
    # Before JAX's first use: with preallocation on, it takes 75% of the GPU.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax

        if jax.default_backend() == "gpu":
            libs.append(JaxLib(jax))
        else:
            missing.append(f"jax: default backend is {jax.default_backend()}")
    except Exception as exc:  # likewise
        missing.append(f"jax: {_text(exc)}")
    return libs, missing


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
    case: Case,
    libs: list[Lib],
    rng: random.Random,
    rounds: int,
    sync: Callable[[], None],
    heat: Callable[[float], int | None],
    heat_s: float,
) -> list[dict[str, Any]]:
    """Check, warm up and time every peer of one case; one row per peer."""
    rows: list[dict[str, Any]] = []
    peers: list[Peer] = []
    for lib in libs:
        reason = lib.skip(case)
        if reason:
            rows.append(_row(case, lib, "(not run)", note=reason))
            continue
        try:
            candidates = lib.peers(case)
        except Exception as exc:  # the library cannot make this case at all
            rows.append(_row(case, lib, "(peers)", error=_text(exc)))
            continue
        for peer in candidates:
            try:
                lib.poison(case.nbytes)
                error = lib.check(peer.fn(), case, peer.role == "limit")
                for _ in range(3):  # warm-up: compiled, pools filled
                    peer.fn()
                sync()
            except Exception as exc:
                error = _text(exc)
            if error:
                rows.append(_row(case, lib, peer.name, error=error))
            else:
                peers.append(peer)
    calls = {p.name: _calls(p, case.nbytes) for p in peers}
    sync()
    mhz = heat(heat_s)
    times: dict[str, list[float]] = {p.name: [] for p in peers}
    latencies: dict[str, list[float]] = {p.name: [] for p in peers}
    for _ in range(rounds):
        order = list(peers)
        rng.shuffle(order)
        for peer in order:
            times[peer.name].append(peer.lib.per_call(peer.fn, calls[peer.name]))
            latencies[peer.name].extend(
                peer.lib.latency(peer.fn) for _ in range(LATENCY_SAMPLES)
            )
            sync()  # nothing of this peer still runs when the next one starts
    for peer in peers:
        role_of = {p.role: p.name for p in peers if p.lib is peer.lib}
        per_call = statistics.median(times[peer.name])
        rows.append(
            _row(
                case,
                peer.lib,
                peer.name,
                per_call_us=per_call * 1e6,
                latency_us=statistics.median(latencies[peer.name]) * 1e6,
                GB_per_s=case.nbytes / per_call / 1e9,
                x_limit=_median_ratio(times, peer.name, role_of.get("limit")),
                # Throughput as a share of the library's zeros of this output
                # (100: memset speed, the bandwidth limit of the write).
                pct_of_zeros=_percent(
                    _median_ratio(times, peer.name, role_of.get("limit"))
                ),
                x_eyelike=_median_ratio(times, peer.name, role_of.get("eyelike")),
                calls=calls[peer.name],
                rounds=rounds,
                sm_clock_mhz=mhz,
            )
        )
    return rows


def _text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _row(case: Case, lib: Lib, peer: str, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "backend": lib.name,
        "case": case.name,
        "peer": peer,
        "per_call_us": None,
        "latency_us": None,
        "GB_per_s": None,
        "x_limit": None,
        "pct_of_zeros": None,
        "x_eyelike": None,
        "calls": None,
        "rounds": None,
        "sm_clock_mhz": None,
        "timing": lib.timing,
        "stream_check": lib.stream_check,
        "error": None,
        "note": None,
    }
    row.update(values)
    return row


def run_gpu(rounds: int = ROUNDS, seed: int | None = None) -> list[dict[str, Any]]:
    """Check and time every peer on every case; one row per (case, peer).

    A peer or case that fails has a row with its ``error`` and is not
    timed; the others still are.
    """
    import cupy as cp

    seed = random.randrange(2**32) if seed is None else seed
    rng = random.Random(seed)
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    libs, missing = _libraries(cp)
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
    rows: list[dict[str, Any]] = []
    for case in CASES:
        t0 = time.perf_counter()
        try:
            case_rows = _run_case(case, libs, rng, rounds, sync, heat, HEAT_S)
        except Exception as exc:  # keep the other cases' figures
            case_rows = [_row(case, libs[0], "(case)", error=_text(exc))]
        rows.extend({**meta, **r} for r in case_rows)
        for lib in libs:
            lib.free_memory()
        errors = sum(r["error"] is not None for r in case_rows)
        print(
            f"eyelike bench: {case.name}: {len(case_rows)} rows, {errors} errors, "
            f"{time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The GPU rows as a fixed-width text table, after how they were made."""
    if not rows:
        return "no rows"
    first = rows[0]
    lines = [
        f"device: {first['device']}, max SM clock {first['max_sm_clock_mhz']} MHz, "
        f"seed {first['seed']}",
    ]
    if first["not_run"]:
        lines.append(f"not run: {first['not_run']}")
    seen: set[str] = set()
    for r in rows:
        if r["backend"] not in seen:
            seen.add(r["backend"])
            lines.append(f"{r['backend']}: {r['timing']}; streams: {r['stream_check']}")
    lines.append(
        f"{'case':<22} {'peer':<28} {'per call':>11} {'latency':>10} "
        f"{'GB/s':>7} {'x limit':>7} {'% zeros':>7} {'x eyelike':>9} "
        f"{'SM MHz':>6}"
    )
    for r in rows:
        head = f"{r['case']:<22} {r['peer']:<28}"
        if r["error"] is not None:
            lines.append(f"{head} ERROR {r['error']}")
            continue
        if r["per_call_us"] is None:
            lines.append(f"{head} {r['note']}")
            continue
        lines.append(
            f"{head} {r['per_call_us']:>8.2f} us {r['latency_us']:>7.1f} us "
            f"{r['GB_per_s']:>7.1f} {_fmt(r['x_limit']):>7} "
            f"{_fmt(r['pct_of_zeros'], '.0f'):>7} {_fmt(r['x_eyelike']):>9} "
            f"{r['sm_clock_mhz'] or '-':>6}"
        )
    return "\n".join(lines)


def _fmt(ratio: float | None, spec: str = ".2f") -> str:
    return "-" if ratio is None else format(ratio, spec)


def _percent(x_limit: float | None) -> float | None:
    """A time ratio to the limit as a share of its throughput, in percent."""
    return None if not x_limit else 100.0 / x_limit
