"""The GPU table's libraries: how each one's peers are made, checked and
timed (`Lib`), and CuPy's (`CuPyLib`). Torch and JAX: ``gpu_libs``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eyelike import eye, eye_like

from .cases import GpuCase

SENTINEL = 7  # poison: a value no eye contains


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

    def check(self, got: Any, case: GpuCase, zeros: bool) -> str:
        """Why ``got`` is not exactly the case's eye (or, for the limit, all
        zeros) on the GPU; "" if it is."""
        raise NotImplementedError

    def skip(self, case: GpuCase) -> str:
        """Why this library does not take part in ``case``, or ""."""
        return ""

    def peers(self, case: GpuCase) -> list[Peer]:
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
    role: str = "idiom"  # "eyelike", "limit", "idiom" or "probe" (zeros)


def _count_error(
    shape: tuple[int, ...],
    dtype: str,
    nonzero: int,
    diagonal_ones: bool,
    c: GpuCase,
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


def _diagonal_ones(xp: Any, got: Any, case: GpuCase) -> bool:
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
        # CuPy's own timer: one call between two events on the current
        # stream, synchronised. On an idle stream the host's work before the
        # launch lies between the events too: what a lone call costs.
        from cupyx.profiler import benchmark

        return float(benchmark(fn, n_repeat=1, n_warmup=0).gpu_times[0][0])

    def poison(self, nbytes: int) -> None:
        # Freed to CuPy's pool: the next allocation of this size reuses it.
        buf = self.cp.empty(nbytes, dtype=self.cp.uint8)
        buf.fill(SENTINEL)
        del buf

    def free_memory(self) -> None:
        self.cp.get_default_memory_pool().free_all_blocks()

    def skip(self, case: GpuCase) -> str:
        try:
            case.np_dtype  # noqa: B018 (bfloat16 needs ml_dtypes)
        except ImportError as exc:
            return f"{case.dtype} needs ml_dtypes: {type(exc).__name__}: {exc}"
        return ""

    def check(self, got: Any, case: GpuCase, zeros: bool) -> str:
        cp = self.cp
        if not isinstance(got, cp.ndarray):
            return f"not a CuPy array: {type(got).__name__}"
        nonzero = int(cp.count_nonzero(_comparable(cp, got)[0]))
        ones = _diagonal_ones(cp, got, case)
        return _count_error(got.shape, got.dtype.name, nonzero, ones, case, zeros)

    def peers(self, case: GpuCase) -> list[Peer]:
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
            peers += self._probes(case)
        return peers

    def _probes(self, case: GpuCase) -> list[Peer]:
        """The store patterns behind the kernel's speed, side by side with
        it: eyelike's element path on the same output (one store per
        element), and zeros written by a bare kernel as the vector path
        wrote them until 2026-12-04 (each thread 4 x 16 B of its own 64 B,
        so each store instruction of a warp spans 2 KiB: a third of the
        memset's speed on an H200) and as it writes them now, coalesced
        across the warp (store j of lane l at 512 j + 16 l of the warp's
        2 KiB: the memset's speed)."""
        from eyelike._backends.cupy import fill
        from eyelike._backends.cupy.planning import plan

        cp, shape, dt = self.cp, case.shape, case.np_dtype
        words = case.nbytes // 16
        if case.nbytes % 2048 or words >= 2**32:
            return []
        source = r"""
        extern "C" __global__ void own64(uint4* out, unsigned int n) {
          unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
          if (4u * t + 3u < n) {
            for (int j = 0; j < 4; ++j) out[4u * t + j] = make_uint4(0, 0, 0, 0);
          }
        }
        extern "C" __global__ void warp64(uint4* out, unsigned int n) {
          unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
          unsigned int base = (t / 32u) * 128u + t % 32u;
          if (4u * t + 3u < n) {
            for (int j = 0; j < 4; ++j) out[base + 32u * j] = make_uint4(0, 0, 0, 0);
          }
        }
        """
        module = cp.RawModule(code=source)
        threads = words // 4
        grid = ((threads + 127) // 128,)

        def stores(name: str) -> Callable[[], Any]:
            kernel = module.get_function(name)

            def write() -> Any:
                a = cp.empty(shape, dt)
                kernel(grid, (128,), (a, cp.uint32(words)))
                return a

            return write

        def element_path() -> Any:
            a = cp.empty(shape, dt)
            fill(a, 0, plan(shape, 0, a.itemsize, contiguous=False, address=0))
            return a

        return [
            Peer(self, "probe: eyelike element path", element_path),
            Peer(self, "probe: zeros, 4x16 B own chunk", stores("own64"), "probe"),
            Peer(self, "probe: zeros, 4x16 B coalesced", stores("warp64"), "probe"),
        ]

    def _per_matrix_peers(self, case: GpuCase) -> list[Peer]:
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
        eye once the graph has run. (16 x 64 x 64 int32, 256 KiB: the
        vector kernel, the one the table times.)
        """
        cp = self.cp
        try:
            side = cp.cuda.Stream(non_blocking=True)
            with side:
                out = cp.full((16, 64, 64), SENTINEL, dtype=cp.int32)
                eye(64, batch_shape=16, out=out)  # compile outside the capture
                out.fill(SENTINEL)
                side.synchronize()
                side.begin_capture()
                try:
                    eye(64, batch_shape=16, out=out)
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
