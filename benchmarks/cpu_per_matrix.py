"""The CPU table's per-matrix peers on torch and JAX: eyelike with one
offset per matrix (``k`` an int64 array of the library) beside that
library's mask idiom ``((c - r) == k).astype(dtype)``, timed whole (its
``arange`` included), in the pairs ``LIB: eyelike`` and ``LIB: idiom``:
eager, and for JAX also both under ``jax.jit`` (``k`` an argument, as a
data loader's would be). NumPy's pair is `cpu_peers._numpy_peers`'."""

from __future__ import annotations

import contextlib
from typing import Any

from eyelike import eye

from .cases import CpuCase
from .cpu_peers import Peer

__all__: list[str] = []


def _per_matrix_peers(c: CpuCase) -> dict[str, Peer]:
    """The torch and JAX pairs of a per-matrix case (those installed)."""
    if not c.per_matrix or c.out:
        return {}
    peers: dict[str, Peer] = {}
    for add in (_torch_pair, _jax_pair):
        with contextlib.suppress(ImportError):
            peers.update(add(c))
    return peers


def _torch_pair(c: CpuCase) -> dict[str, Peer]:
    import torch

    dt = getattr(torch, c.dtype)
    n, batch = c.n, c.batch
    k = torch.as_tensor(c.offsets())  # int64

    def idiom() -> Any:
        a = torch.arange(n)
        return ((a[None, :] - a[:, None]) == k[..., None, None]).to(dt)

    return {
        "torch: eyelike": lambda: eye(n, k=k, batch_shape=batch, dtype=dt, xp=torch),
        "torch: idiom": idiom,
    }


def _jax_pair(c: CpuCase) -> dict[str, Peer]:
    import jax
    import jax.numpy as jnp

    n, batch, dt = c.n, c.batch, c.dtype
    k = jnp.asarray(c.offsets(), dtype=jnp.int32)  # JAX's int64, without x64

    def ours(k: Any) -> Any:
        return eye(n, k=k, batch_shape=batch, dtype=dt, xp=jnp)

    def idiom(k: Any) -> Any:
        a = jnp.arange(n)
        return ((a[None, :] - a[:, None]) == k[..., None, None]).astype(dt)

    mine, theirs = jax.jit(ours), jax.jit(idiom)
    return {
        "jax: eyelike": lambda: ours(k).block_until_ready(),
        "jax: idiom": lambda: idiom(k).block_until_ready(),
        "jax.jit: eyelike": lambda: mine(k).block_until_ready(),
        "jax.jit: idiom": lambda: theirs(k).block_until_ready(),
    }
