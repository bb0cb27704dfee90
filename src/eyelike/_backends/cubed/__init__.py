"""The cubed backend: a lazy batched eye whose every task fits the Spec
(its chunks: ``chunks.py``).

Each block is made, when computed, by the lazy libraries' one adapter of
the eager fill (``dask._block``), from its block id: its offsets in the
chunk grid give the block's own diagonal, and a per-matrix ``k`` is read by
blocks beside it. The block functions are module-level (cubed ships them to
serverless workers by pickling). ``eye_like`` keeps ``x``'s Spec (as
``cubed.zeros_like``); ``eye`` takes its config's, or a cubed ``k``'s, as
cubed's creation functions and operations do.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..._validate.dtypes import is_ml_dtype
from ..._validate.text import show
from .._base import Backend, Build, clamp, host_device
from ..dask import _block
from ..dask.chunks import lazy_k
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

    def _clamp(self, k: Any, n_rows: int, n_cols: int, device: Any) -> Any:
        # Not moved (one device: cubed reads k's blocks where it makes the
        # output's).
        index = self._index_dtype(self.device_of(k))
        return clamp(self._xp, k, n_rows, n_cols, index)

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
    ``shape``. ``k``: an int; the whole host ``k``, of which the block's
    slice is read (it travels with the function, as ``cubed.from_array``
    ships its array); or None, where ``x`` is the block of a cubed ``k``
    (else ``x`` is a virtual empty block)."""
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
    shift = starts[-2] - starts[-1]  # (r0 - c0: the piece's own diagonals)
    return _block(piece, k, out_dtype=dtype, shift=shift)


def _k_key(out_key: Any, *, name: str, numblocks: tuple[int, ...]) -> Any:
    """The block of ``k`` (of ``numblocks``) an output block reads: the one
    at its batch coordinates, 0 along a dimension where ``k`` broadcasts."""
    blockwise = library("cubed.primitive.blockwise")
    coords = out_key.coords[-2 - len(numblocks) : -2]
    coords = tuple(c if n > 1 else 0 for c, n in zip(coords, numblocks, strict=True))
    return blockwise.FunctionArgs(
        blockwise.ChunkKey(name, coords), output_name=out_key.name
    )


def _spec_of(build: Build) -> Any:
    """The Spec: ``x``'s, a cubed ``k``'s, or cubed's config's."""
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
    """A lazy cubed array of the batched eye ``build`` asks for, chunked as
    `chunks.chunks_of` says.

    Raises
    ------
    ValueError
        ``chunks`` is not a regular chunking of the shape, or a cubed ``k``
        has another Spec than ``x``.
    """
    cubed = library("cubed")
    shape = build.shape
    dtype = np.dtype(build.dtype)
    spec = _spec_of(build)
    chunks = chunks_of(build, spec, dtype)
    if 0 in shape:
        return cubed.zeros(shape, dtype=dtype, chunks=chunks, spec=spec)
    k = lazy_k(build.k, shape[:-2], chunks[:-2], cubed.Array)
    sizes = tuple(dim[0] for dim in chunks)
    piece = partial(_piece, sizes=sizes, shape=shape, dtype=dtype)
    if not isinstance(k, cubed.Array):  # an int, or host values read by slices
        return cubed.map_blocks(
            partial(piece, k=k), dtype=dtype, chunks=chunks, spec=spec
        )
    return library("cubed.core.ops").general_blockwise(
        partial(piece, k=None),
        partial(_k_key, name=k.name, numblocks=k.numblocks),
        k,
        shapes=[shape],
        dtypes=[dtype],
        chunkss=[chunks],
    )
