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
from ..._validate.text import show
from .._base import Backend, Build, host_device
from ..dask import _block
from ..dask.chunks import k_chunks
from .chunks import chunks_of, library

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

    def eye(self, build: Build) -> Any:
        return eye(build)


def _piece(
    x: Any,
    *,
    k: Any,
    sizes: tuple[int, ...],
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    block_id: Any,
) -> Any:
    """The block at ``block_id`` (in chunks of ``sizes``) of an eye of
    ``shape``. ``k``: an int; or the whole host ``k``, of which the block's
    slice is read (it travels with the function, as ``cubed.from_array``
    ships its array: cubed holds no array of over 1 MB as its own); or None,
    where ``x`` is the block of a cubed ``k`` (else the virtual empty block)."""
    starts = [i * s for i, s in zip(block_id, sizes, strict=True)]
    piece = tuple(min(s, n - a) for a, s, n in zip(starts, sizes, shape, strict=True))
    if k is None:
        k = x
    elif not isinstance(k, int):
        lead = len(shape) - 2 - k.ndim
        index = []
        for j, n in enumerate(k.shape):  # (whole where k broadcasts)
            a, p = starts[lead + j], piece[lead + j]
            index.append(slice(a, a + p) if n == shape[lead + j] else slice(None))
        k = k[tuple(index)]
    return _block(piece, k, out_dtype=dtype, shift=starts[-2] - starts[-1])


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


def eye(build: Build) -> Any:
    """A lazy cubed array of the batched eye ``build`` asks for, in the Spec
    and chunks `chunks.chunks_of` gives (``build.chunks``: for the batch
    dims, or every dim; None: the Spec's default). ``k`` is an int or an
    integer array (NumPy, or cubed).

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
    chunks = chunks_of(build, spec, dtype)
    if 0 in shape:
        return cubed.zeros(shape, dtype=dtype, chunks=chunks, spec=spec)
    if isinstance(k, np.ndarray) and k.ndim == 0:
        k = int(k)
    sizes = tuple(dim[0] for dim in chunks)
    piece = partial(_piece, sizes=sizes, shape=shape, dtype=dtype)
    if not isinstance(k, cubed.Array):
        return cubed.map_blocks(
            partial(piece, k=k), dtype=dtype, chunks=chunks, spec=spec
        )
    batch = shape[:-2]
    offset = len(batch) - k.ndim
    broadcast = tuple(s != batch[offset + j] for j, s in enumerate(k.shape))
    kc = k_chunks(tuple(k.shape), batch, chunks[:-2])
    k = k if k.chunks == kc else k.rechunk(kc)
    return library("cubed.core.ops").general_blockwise(
        partial(piece, k=None),
        partial(_k_key, name=k.name, offset=offset, broadcast=broadcast),
        k,
        shapes=[shape],
        dtypes=[dtype],
        chunkss=[chunks],
    )
