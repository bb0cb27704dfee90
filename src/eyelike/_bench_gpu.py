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
  diagonal has and every element where it lies 1, or all zeros for the
  limit; bfloat16 by its bits), with the memory it will likely reuse
  poisoned first where the library allows. A peer that fails a check is not
  timed: its row carries the error, and the run goes on.
* Cases (`CASES`), most important first: the 256 MiB float32 batch on all
  three libraries; per-matrix k on CuPy over 64 x 64 matrices (the regular
  per-matrix vector kernel) and over matrices under 64 bytes (the
  small-matrix kernel, at 1 and 4 bytes), against zeros + a fancy-index
  write of the ones and the mask ``cols - rows == k`` written into the
  output; the 3 x 3 latency case; every other dtype at 256 MiB on CuPy
  (eyelike, the limit, zeros + diagonal; fewer rounds); torch and JAX on
  bool, uint8, float16 and float64; then 1 GiB outputs.
* Time limit (``deadline``): a case starts only if the time left covers a
  fifth more than the longest case of its kind so far, and a running case
  stops its rounds at the deadline (after one at least). The cases left out
  have rows saying "not run: out of time". Each case's rows are printed as
  it ends, and ``on_case`` writes the file, so a kill loses no finished case.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
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
from ._dtypes import ITEMSIZE

__all__ = ["CASES", "Case", "run_cases", "run_gpu", "table", "write_json"]

ROUNDS = 15  # timings per peer and case; medians over these
CORE_ROUNDS = 9  # the same for the cheap cases that cover every dtype
LATENCY_SAMPLES = 2  # single synchronised calls per peer and round
TARGET_S = 0.004  # GPU time one timing of back-to-back calls should span
MAX_CALLS = 2000
# Outputs that can be alive at once while calls are queued (JAX frees a
# buffer only once its computation is done): bounds the calls per timing.
MAX_QUEUED_BYTES = 16 << 30
HEAT_S = 0.5  # seconds of load before each case (1.5 s before the first)
HEAT_BYTES = 1 << 30
SENTINEL = 7  # poison: a value no eye contains


LIBRARIES = ("cupy", "torch", "jax")


def dtype_of(name: str) -> np.dtype[Any]:
    """The NumPy dtype of a case's dtype name (bfloat16: ml_dtypes')."""
    if name == "bfloat16":
        import ml_dtypes

        bf16: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
        return bf16
    return np.dtype(name)


@dataclass(frozen=True)
class Case:
    """One output shape and dtype, its k, and who takes part.

    ``per_matrix``: k is one int per matrix, ``b % (2n + 1) - n`` for matrix
    b of the flattened batch, so the batch cycles through every clamped k
    from -n to n (the first and last give all zeros). ``libs``: the
    libraries that take part. ``peers``: "all" for every idiom, "core" for
    eyelike, the limit and ``zeros`` + diagonal write only (the cheap cases
    that cover every dtype). ``rounds``: timings per peer.
    """

    batch: tuple[int, ...]
    n: int
    dtype: str
    per_matrix: bool = False
    libs: tuple[str, ...] = LIBRARIES
    peers: str = "all"
    rounds: int = ROUNDS

    @property
    def shape(self) -> tuple[int, ...]:
        return (*self.batch, self.n, self.n)

    @property
    def np_dtype(self) -> np.dtype[Any]:
        return dtype_of(self.dtype)

    @property
    def nbytes(self) -> int:
        # From the table, not the dtype: bfloat16's needs ml_dtypes.
        return math.prod(self.shape) * ITEMSIZE[self.dtype]

    @property
    def matrices(self) -> int:
        return math.prod(self.batch)

    @property
    def ones(self) -> int:
        """How many elements of the output are 1."""
        if not self.per_matrix:
            return self.matrices * self.n
        # Matrix b has k = b % (2n + 1) - n, so n - |k| ones.
        per_k = [self.n - abs(j - self.n) for j in range(2 * self.n + 1)]
        cycles, rest = divmod(self.matrices, len(per_k))
        return cycles * sum(per_k) + sum(per_k[:rest])

    def offsets(self, xp: Any) -> Any:
        """The per-matrix k as an int32 array of ``xp``, of the batch's shape."""
        b = xp.arange(self.matrices, dtype=xp.int32)
        return (b % (2 * self.n + 1) - self.n).reshape(self.batch)

    @property
    def name(self) -> str:
        k = f" k=b%{2 * self.n + 1}-{self.n}" if self.per_matrix else ""
        return f"{'x'.join(map(str, self.shape))} {self.dtype}{k}"


def _mib256(dtype: str, **options: Any) -> Case:
    """A batch of 64 x 64 matrices of exactly 256 MiB in ``dtype``."""
    return Case(((1 << 28) // (4096 * ITEMSIZE[dtype]),), 64, dtype, **options)


_CUPY = ("cupy",)
# Every dtype eyelike's CuPy backend makes, but float32 (the first case).
_OTHERS = (
    "bool", "int8", "uint8", "int16", "uint16", "float16", "bfloat16", "int32",
    "uint32", "int64", "uint64", "float64", "complex64", "complex128",
)  # fmt: skip
# Most important first: cases left when the time limit comes are not run.
# 1. The GPU targets (>= 90% of zeros in every dtype, ahead of every
#    idiom): the 256 MiB float32 batch on every library; per-matrix k (the
#    regular vector kernel, then the small-matrix kernel at 1 and 4 bytes);
#    the latency case; every other dtype at 256 MiB on CuPy (eyelike, the
#    limit, zeros + diagonal); torch and JAX on the dtypes both have.
# 2. Larger outputs: a 1 GiB batch and a 1 GiB matrix, and per-matrix k over
#    4 x 4 float32 matrices (64 bytes: one chunk each, the regular kernel).
CASES = [
    _mib256("float32"),
    _mib256("float32", per_matrix=True, libs=_CUPY),
    Case((), 3, "float32"),
    Case((1 << 24,), 4, "uint8", per_matrix=True, libs=_CUPY),
    Case((1 << 23,), 3, "float32", per_matrix=True, libs=_CUPY),
    *(
        _mib256(dtype, libs=_CUPY, peers="core", rounds=CORE_ROUNDS)
        for dtype in _OTHERS
    ),
    *(
        _mib256(dtype, libs=("torch", "jax"))
        for dtype in ("bool", "uint8", "float16", "float64")
    ),
    Case((65536,), 64, "float32"),
    Case((), 16384, "float32"),
    Case((1 << 24,), 4, "float32", per_matrix=True, libs=_CUPY),
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
    # Exactly c.ones non-zeros and all c.ones elements where the diagonal
    # lies equal to 1: then the non-zeros are the diagonal's ones, and the
    # rest is 0.
    if nonzero != c.ones or not diagonal_ones:
        return f"{nonzero} non-zeros (want {c.ones}), diagonal all 1: {diagonal_ones}"
    return ""


def _comparable(xp: Any, got: Any) -> tuple[Any, int]:
    """``got`` as an array whose elements compare to an int, and the value
    of 1 there: bfloat16 as its bits (uint16, 1.0 is 0x3F80), so that the
    check needs no bfloat16 comparison or reduction from the library."""
    if got.dtype.name == "bfloat16":
        return got.view(xp.uint16), 0x3F80
    return got, 1


def _diagonal_ones(xp: Any, got: Any, case: Case) -> bool:
    """Whether every element where the case's diagonal lies is 1."""
    values, one = _comparable(xp, got)
    if not case.per_matrix:
        return bool((xp.diagonal(values, 0, -2, -1) == one).all())
    rows = xp.arange(case.n)
    where = (rows[None, :] - rows[:, None]) == case.offsets(xp)[..., None, None]
    return int(xp.count_nonzero((values == one) & where)) == case.ones


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

    def skip(self, case: Case) -> str:
        try:
            case.np_dtype  # noqa: B018 (bfloat16 needs ml_dtypes)
        except ImportError as exc:
            return f"{case.dtype} needs ml_dtypes: {_text(exc)}"
        return ""

    def check(self, got: Any, case: Case, zeros: bool) -> str:
        cp = self.cp
        if not isinstance(got, cp.ndarray):
            return f"not a CuPy array: {type(got).__name__}"
        nonzero = int(cp.count_nonzero(_comparable(cp, got)[0]))
        ones = _diagonal_ones(cp, got, case)
        return _count_error(got.shape, got.dtype.name, nonzero, ones, case, zeros)

    def peers(self, case: Case) -> list[Peer]:
        cp, n, batch, shape = self.cp, case.n, case.batch, case.shape
        dt = case.np_dtype
        if case.per_matrix:
            return self._per_matrix_peers(case)
        peers = [
            Peer(
                self,
                "eyelike",
                lambda: eye(n, batch_shape=batch, dtype=dt, xp=cp),
                "eyelike",
            ),
            Peer(self, "cupy.zeros (limit)", lambda: cp.zeros(shape, dt), "limit"),
        ]
        if case.peers == "all":
            x = cp.empty(shape, dt)  # eye_like's template; never read
            peers.append(Peer(self, "eyelike.eye_like", lambda: eye_like(x)))
        if not batch:
            peers.append(Peer(self, "cupy.eye", lambda: cp.eye(n, dtype=dt)))
            return peers

        def zeros_diagonal() -> Any:
            a = cp.zeros(shape, dt)
            a.diagonal(0, -2, -1)[...] = 1
            return a

        peers.append(Peer(self, "cupy.zeros+diagonal fill", zeros_diagonal))
        if case.peers == "all":
            peers.append(
                Peer(
                    self,
                    "cupy.eye+broadcast copy",
                    lambda: cp.broadcast_to(cp.eye(n, dtype=dt), shape).copy(),
                )
            )
        return peers

    def _per_matrix_peers(self, case: Case) -> list[Peer]:
        """eyelike with one k per matrix (a CuPy int32 array), and CuPy's
        idioms for it: zeros, then the ones written by fancy indexing; and
        the mask ``cols - rows == k`` written straight into the output."""
        cp, n, batch, shape = self.cp, case.n, case.batch, case.shape
        dt = case.np_dtype
        if len(batch) != 1:
            msg = "per-matrix k cases have one batch dimension"
            raise ValueError(msg)
        kk = case.offsets(cp)
        rows = cp.arange(n)
        matrix = cp.arange(batch[0])[:, None]  # (B, 1)
        k_col = kk[:, None]  # (B, 1)
        k_mat = kk[:, None, None]  # (B, 1, 1)
        diag = rows[None, :] - rows[:, None]  # (n, n): col - row

        def zeros_fancy() -> Any:
            # No host sync: row r of matrix b has its one at column r + k
            # if that is inside; a row without one writes 0 at a clipped
            # column, which is no other row's and not its own one.
            a = cp.zeros(shape, dt)
            cols = rows[None, :] + k_col  # (B, n)
            inside = (cols >= 0) & (cols < n)
            a[matrix, rows[None, :], cols.clip(0, n - 1)] = inside
            return a

        def mask() -> Any:
            a = cp.empty(shape, dt)
            cp.equal(diag, k_mat, out=a)  # bool cast to dt as it is written
            return a

        return [
            Peer(
                self,
                "eyelike",
                lambda: eye(n, k=kk, batch_shape=batch, dtype=dt, xp=cp),
                "eyelike",
            ),
            Peer(self, "cupy.zeros (limit)", lambda: cp.zeros(shape, dt), "limit"),
            Peer(self, "cupy.zeros+fancy-index write", zeros_fancy),
            Peer(self, "cupy.equal(cols-rows, k, out=)", mask),
        ]

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
        if case.np_dtype.itemsize == 8 and not self.jax.config.jax_enable_x64:
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
                rounds=done,
                sm_clock_mhz=mhz,
                note=cut,
            )
        )
    return rows


OUT_OF_TIME = "not run: out of time"


def run_cases(
    cases: list[Case],
    run_case: Callable[[Case, Callable[[], bool]], list[dict[str, Any]]],
    not_run: Callable[[Case, str], list[dict[str, Any]]],
    *,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    on_case: Callable[[Case, list[dict[str, Any]], float], None] | None = None,
) -> list[dict[str, Any]]:
    """Run ``cases`` in order until ``deadline`` (a time of ``clock``).

    A case starts only if the time left covers its guessed duration
    (`_guess`); otherwise ``not_run(case, note)`` makes its rows, whose note
    starts with `OUT_OF_TIME`. ``run_case(case, out_of_time)`` runs one
    case, and cuts its rounds short once ``out_of_time()`` is true. After
    every case, run or not, ``on_case(case, its rows, seconds)`` is called
    (to print the rows and write the file so far). Returns every row.
    """
    rows: list[dict[str, Any]] = []
    took: dict[tuple[Any, ...], float] = {}

    def out_of_time() -> bool:
        return deadline is not None and clock() >= deadline

    for case in cases:
        t0 = clock()
        if deadline is not None:
            left, guess = deadline - t0, _guess(case, took)
            if left <= 0 or left < guess:
                note = f"{OUT_OF_TIME} ({max(left, 0):.0f} s left"
                note += f", about {guess:.0f} s needed)" if guess else ")"
                case_rows = not_run(case, note)
                rows.extend(case_rows)
                if on_case is not None:
                    on_case(case, case_rows, 0.0)
                continue
        case_rows = run_case(case, out_of_time)
        seconds = clock() - t0
        key = _kind(case)
        took[key] = max(took.get(key, 0.0), seconds)
        rows.extend(case_rows)
        if on_case is not None:
            on_case(case, case_rows, seconds)
    return rows


def _kind(case: Case) -> tuple[Any, ...]:
    """Cases of one kind take about as long (outputs of 256 MiB to 1 GiB
    take about the same number of timings' worth of GPU time)."""
    return (case.libs, case.peers, case.per_matrix, case.rounds)


def _guess(case: Case, took: dict[tuple[Any, ...], float]) -> float:
    """Seconds a case will likely take: a fifth more than the longest case
    of its kind so far, else than the longest so far, else 0 (the first
    case always starts)."""
    same = took.get(_kind(case))
    if same is not None:
        return 1.2 * same
    return 1.2 * max(took.values(), default=0.0)


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


def run_gpu(
    rounds: int | None = None,
    seed: int | None = None,
    *,
    deadline: float | None = None,
    on_case: Callable[[list[dict[str, Any]]], None] | None = None,
    cases: list[Case] | None = None,
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

    def taking_part(case: Case) -> list[Lib]:
        return [lib for lib in libs if lib.name in case.libs]

    def run_case(case: Case, out_of_time: Callable[[], bool]) -> list[dict[str, Any]]:
        if rounds is not None:
            case = dataclasses.replace(case, rounds=rounds)
        try:
            got = _run_case(
                case, taking_part(case), rng, sync, heat, HEAT_S, out_of_time
            )
        except Exception as exc:  # keep the other cases' figures
            got = [_row(case, libs[0], "(case)", error=_text(exc))]
        for lib in libs:
            lib.free_memory()
        return [{**meta, **r} for r in got]

    def not_run(case: Case, note: str) -> list[dict[str, Any]]:
        return [
            {**meta, **_row(case, lib, "(not run)", note=note)}
            for lib in taking_part(case)
        ]

    rows: list[dict[str, Any]] = []

    def done(case: Case, case_rows: list[dict[str, Any]], seconds: float) -> None:
        rows.extend(case_rows)
        errors = sum(r["error"] is not None for r in case_rows)
        lines = [
            f"eyelike bench: {case.name}: {len(case_rows)} rows, {errors} errors, "
            f"{seconds:.1f} s",
            *(f"  {_line(r)}" for r in case_rows),
        ]
        print("\n".join(lines), file=sys.stderr, flush=True)
        if on_case is not None:
            on_case(rows)

    run_cases(
        CASES if cases is None else cases,
        run_case,
        not_run,
        deadline=deadline,
        on_case=done,
    )
    return rows


def not_run_cases(rows: list[dict[str, Any]]) -> list[str]:
    """The cases that the time limit left out, in order, as "case on
    library" (one case can run on CuPy early and on torch later)."""
    names: list[str] = []
    for r in rows:
        name = f"{r['case']} on {r['backend']}"
        if (r["note"] or "").startswith(OUT_OF_TIME) and name not in names:
            names.append(name)
    return names


def write_json(path: str, rows: list[dict[str, Any]], complete: bool) -> None:
    """Write the rows so far to ``path`` at once (a new file moved over the
    old), so that a run killed at any moment leaves a whole JSON file."""
    part = f"{path}.part"
    with open(part, "w", encoding="utf-8") as f:
        json.dump(
            {"complete": complete, "cases_not_run": not_run_cases(rows), "rows": rows},
            f,
            indent=1,
        )
    os.replace(part, path)


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
        f"{'case':<{_CASE_W}} {'peer':<{_PEER_W}} {'per call':>11} {'latency':>10} "
        f"{'GB/s':>7} {'x limit':>7} {'% zeros':>7} {'x eyelike':>9} "
        f"{'SM MHz':>6}"
    )
    lines.extend(_line(r) for r in rows)
    skipped = not_run_cases(rows)
    if skipped:
        lines.append(f"{len(skipped)} case(s) {OUT_OF_TIME}: {', '.join(skipped)}")
    return "\n".join(lines)


_CASE_W = 32
_PEER_W = 30


def _line(r: dict[str, Any]) -> str:
    """One row of the table."""
    head = f"{r['case']:<{_CASE_W}} {r['peer']:<{_PEER_W}}"
    if r["error"] is not None:
        return f"{head} ERROR {r['error']}"
    if r["per_call_us"] is None:
        return f"{head} {r['note']}"
    line = (
        f"{head} {r['per_call_us']:>8.2f} us {r['latency_us']:>7.1f} us "
        f"{r['GB_per_s']:>7.1f} {_fmt(r['x_limit']):>7} "
        f"{_fmt(r['pct_of_zeros'], '.0f'):>7} {_fmt(r['x_eyelike']):>9} "
        f"{r['sm_clock_mhz'] or '-':>6}"
    )
    return f"{line}  ({r['note']})" if r["note"] else line


def _fmt(ratio: float | None, spec: str = ".2f") -> str:
    return "-" if ratio is None else format(ratio, spec)


def _percent(x_limit: float | None) -> float | None:
    """A time ratio to the limit as a share of its throughput, in percent."""
    return None if not x_limit else 100.0 / x_limit
