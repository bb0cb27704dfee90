"""The cubed backend: a lazy batched eye whose every task fits the Spec.

cubed bounds each task's memory by its Spec's ``allowed_mem``, and refuses
to run an array whose chunk would exceed it: so the chunks here are the
Spec's (`chunks.default_limit`), split along the matrix dimensions too
where one matrix exceeds a task, and a per-matrix ``k`` is split with the
batch chunks (a single chunk of it, or of the output, would be refused).

Each block is made, when computed, by the NumPy backend from its block id
alone: its offsets in the chunk grid give the block's own diagonal (a
block at row ``r0`` and column ``c0`` holds diagonal ``k + r0 - c0`` of its
own, clamped into its bounds), and a per-matrix ``k`` is read by blocks
beside it. The block functions are module-level (cubed ships them to
serverless workers by pickling).

``eye_like`` keeps ``x``'s Spec and chunks (as ``cubed.zeros_like``); ``eye``
takes the Spec cubed's creation functions take (its config's), or a
cubed ``k``'s, as cubed's operations do.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..._validate.dtypes import is_ml_dtype
from ..._validate.offsets import shifted
from ..._validate.text import show
from .. import numpy as _numpy
from .._base import Backend, Build, host_device
from ..dask.chunks import k_chunks  # (the same rule: k's chunks follow the batch's)
from .chunks import Chunks, default_limit, fits, library, out_chunks

__all__ = ["CubedBackend", "eye"]


class CubedBackend(Backend):
    """cubed: lazy, immutable arrays in bounded-memory tasks, NumPy chunks."""

    name = "cubed"
    namespaces = ("cubed", "cubed.array_api")
    takes = frozenset({"chunks"})
    _numpy_dtypes = True
    _scratch = 0  # nothing is made until computed, task by task

    def device(self, device: Any) -> Any:
        # cubed has one device, its chunks' host ("cpu"), and ignores the
        # argument: anything else would be dropped silently.
        return host_device(device, "cubed")

    def dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        found = super().dtype(dtype, device)
        if is_ml_dtype(found[0]):
            # cubed writes every chunk to Zarr, which has no such type.
            msg = (
                f"dtype {found[0].name} is not one cubed can store (its chunks "
                f"are Zarr arrays); got dtype={show(dtype)}"
            )
            raise TypeError(msg)
        return found

    def _move_k(self, k: Any, device: Any) -> Any:
        return k  # one device: cubed reads k's blocks where it makes the output's

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        return np.asarray(x.compute())

    def eye(self, build: Build) -> Any:
        return eye(build)


def _scalar_block(
    x: Any, *, k: int, sizes: tuple[int, ...], dtype: np.dtype[Any], block_id: Any
) -> Any:
    """One block for one ``k``: ``x`` is the virtual empty block (its shape)."""
    shape = tuple(x.shape)
    shift = block_id[-2] * sizes[0] - block_id[-1] * sizes[1]
    return _numpy.eye(Build(shape, shifted(k, shift, *shape[-2:]), dtype))


def _per_matrix(
    kb: Any, shape: tuple[int, ...], sizes: tuple[int, ...], block_id: Any, dtype: Any
) -> Any:
    """A block of ``shape`` at ``block_id`` for its offsets ``kb``."""
    shift = block_id[-2] * sizes[-2] - block_id[-1] * sizes[-1]
    local = shifted(np.asarray(kb, dtype=np.int64), shift, *shape[-2:])
    return _numpy.eye(Build(shape, local, dtype))


def _k_block(
    kb: Any,
    *,
    sizes: tuple[int, ...],
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    block_id: Any,
) -> Any:
    """One block for a per-matrix ``k`` of cubed: ``kb`` is ``k``'s block."""
    out_shape = tuple(
        min(s, n - i * s) for i, s, n in zip(block_id, sizes, shape, strict=True)
    )
    return _per_matrix(kb, out_shape, sizes, block_id, dtype)


def _host_k_block(
    x: Any,
    *,
    k: np.ndarray[Any, Any],
    broadcast: tuple[bool, ...],
    sizes: tuple[int, ...],
    dtype: np.dtype[Any],
    block_id: Any,
) -> Any:
    """One block for a per-matrix ``k`` of host values: its slice of ``k``
    (whole along a dimension where ``k`` broadcasts). The whole ``k`` travels
    with the function, as ``cubed.from_array`` ships its array (cubed holds
    no array of over 1 MB in memory as its own)."""
    shape = tuple(x.shape)
    offset = len(shape) - 2 - k.ndim
    index = []
    for j, b in enumerate(broadcast):
        start = block_id[offset + j] * sizes[offset + j]
        index.append(slice(None) if b else slice(start, start + shape[offset + j]))
    return _per_matrix(k[tuple(index)], shape, sizes, block_id, dtype)


def _k_key(out_key: Any, *, name: str, offset: int, broadcast: tuple[bool, ...]) -> Any:
    """The block of ``k`` an output block reads: its batch coordinates (0
    along a dimension where ``k`` broadcasts)."""
    blockwise = library("cubed.primitive.blockwise")
    coords = out_key.coords[offset : offset + len(broadcast)]
    coords = tuple(0 if b else c for c, b in zip(coords, broadcast, strict=True))
    return blockwise.FunctionArgs(
        blockwise.ChunkKey(name, coords), output_name=out_key.name
    )


def _spec_of(build: Build) -> Any:
    """The Spec: ``x``'s, a cubed ``k``'s, or cubed's config's (as its own
    creation functions take it)."""
    cubed = library("cubed")
    if build.like is not None:
        spec = build.like.spec
        if isinstance(build.k, cubed.Array) and build.k.spec != spec:
            msg = f"k's Spec ({build.k.spec}) is not x's ({spec}): cubed computes one"
            raise ValueError(msg)
        return spec
    if isinstance(build.k, cubed.Array):
        return build.k.spec
    return library("cubed.spec").spec_from_config(cubed.config)


def _chunks_of(build: Build, spec: Any, dtype: np.dtype[Any]) -> Chunks:
    """The caller's, ``x``'s where a task on them fits the Spec (as
    ``cubed.zeros_like`` keeps them: aligned with ``x``), or the Spec's."""
    per_matrix = not (isinstance(build.k, int) or np.ndim(build.k) == 0)
    like = build.like
    if like is not None and fits(spec, like.chunksize, dtype.itemsize, per_matrix):
        return tuple(tuple(int(c) for c in dim) for dim in like.chunks)
    n_rows, n_cols = build.shape[-2:]
    limit, whole = default_limit(spec, n_rows * n_cols * dtype.itemsize, per_matrix)
    return out_chunks(build.chunks, build.shape, dtype, limit, whole)


def eye(build: Build) -> Any:
    """A lazy cubed array of the batched eye ``build`` asks for.

    Parameters
    ----------
    build : Build
        ``shape`` is ``batch + (R, C)``; ``k`` a Python int within
        ``[-R, C]``, or an integer array (NumPy, or cubed) of such offsets
        broadcastable to ``batch``; ``dtype`` a NumPy dtype; ``chunks`` the
        caller's ``chunks=`` (for the batch dims, or every dim), None for
        the Spec's default; ``like`` ``eye_like``'s ``x``, whose Spec and
        chunks are kept.

    Raises
    ------
    ValueError
        ``chunks`` is not a regular chunking of the shape, or a cubed ``k``
        has another Spec than ``x``.
    """
    cubed = library("cubed")
    shape, k = build.shape, build.k
    dtype = np.dtype(build.dtype)
    spec = _spec_of(build)
    chunks = _chunks_of(build, spec, dtype)
    if 0 in shape:
        return cubed.zeros(shape, dtype=dtype, chunks=chunks, spec=spec)
    sizes = tuple(dim[0] for dim in chunks)
    if isinstance(k, np.ndarray) and k.ndim == 0:
        k = int(k)
    if isinstance(k, int):
        return cubed.map_blocks(
            partial(_scalar_block, k=k, sizes=sizes[-2:], dtype=dtype),
            dtype=dtype,
            chunks=chunks,
            spec=spec,
        )
    batch = shape[:-2]
    offset = len(batch) - len(k.shape)
    broadcast = tuple(s != batch[offset + j] for j, s in enumerate(k.shape))
    if not isinstance(k, cubed.Array):
        return cubed.map_blocks(
            partial(_host_k_block, k=k, broadcast=broadcast, sizes=sizes, dtype=dtype),
            dtype=dtype,
            chunks=chunks,
            spec=spec,
        )
    kc = k_chunks(tuple(k.shape), batch, chunks[:-2])
    k = k if k.chunks == kc else k.rechunk(kc)
    return library("cubed.core.ops").general_blockwise(
        partial(_k_block, sizes=sizes, shape=shape, dtype=dtype),
        partial(_k_key, name=k.name, offset=offset, broadcast=broadcast),
        k,
        shapes=[shape],
        dtypes=[dtype],
        chunkss=[chunks],
    )
