"""The GPU table's torch and JAX libraries, and which libraries take part."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from eyelike import eye, eye_like

from .cases import GpuCase
from .gpu_cupy import SENTINEL, CuPyLib, Lib, Peer, _count_error
from .gpu_report import text as _text


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

    def check(self, got: Any, case: GpuCase, zeros: bool) -> str:
        torch = self.torch
        if not isinstance(got, torch.Tensor) or not got.is_cuda:
            where = getattr(got, "device", "")
            return f"not a CUDA tensor: {type(got).__name__} {where}"
        nonzero = int(torch.count_nonzero(got).item())
        ones = bool((got.diagonal(0, -2, -1) == 1).all().item())
        dtype = str(got.dtype).removeprefix("torch.")
        return _count_error(tuple(got.shape), dtype, nonzero, ones, case, zeros)

    def peers(self, case: GpuCase) -> list[Peer]:
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

    def check(self, got: Any, case: GpuCase, zeros: bool) -> str:
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

    def skip(self, case: GpuCase) -> str:
        if case.np_dtype.itemsize == 8 and not self.jax.config.jax_enable_x64:
            return f"{case.dtype} needs jax_enable_x64 (JAX would make 32-bit)"
        return ""

    def peers(self, case: GpuCase) -> list[Peer]:
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


def libraries(cp: Any) -> tuple[list[Lib], list[str]]:
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
