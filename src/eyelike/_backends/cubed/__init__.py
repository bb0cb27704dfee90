"""The cubed backend: a lazy batched eye whose every task fits the Spec.

Each block is made, when computed, by ``lazy.block`` from its block
id, which gives its own diagonal and its slice of a per-matrix ``k``. The
block functions are module-level: cubed pickles them for its workers. ``eye_like`` keeps
``x``'s Spec (as ``cubed.zeros_like``); ``eye`` takes a cubed ``k``'s, or
its config's. The chunks (`_chunks_of`) fit a task on the eye, or on an
element-wise result of it, within ``allowed_mem`` as cubed projects it,
or cubed computes none of it (``cubed.zeros``' chunks are virtual: never
written); whole matrices where one fits, else one matrix split.
"""

from __future__ import annotations

import importlib
import math
from functools import partial
from typing import Any

import numpy as np

from ..._validate.dtypes import DTypeError, is_ml_dtype
from ..._validate.offsets import along_batch
from ..._validate.text import show
from .._base import Backend, Build, host_device
from ..lazy import Chunks, block, lazy_k, read, refusal

__all__ = ["CubedBackend", "fits"]

# cubed's "auto" chunk size (its normaliser's fixed ceiling, as cubed.zeros).
_AUTO_BYTES = 128 * 2**20
# Beside the chunks: the block-id array's chunk, and slack (bytes).
_MARGIN = 1024
_K_ITEMSIZE = 8  # a per-matrix k is read as int64


class CubedBackend(Backend):
    """cubed: lazy, immutable arrays in bounded-memory tasks, NumPy chunks."""

    name = "cubed"
    namespaces = ("cubed", "cubed.array_api")
    takes = frozenset({"chunks"})
    _numpy_dtypes = True
    _scratch = False  # nothing is made until computed, task by task

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
            raise DTypeError(msg)
        return found

    def eye(self, build: Build) -> Any:
        """A lazy cubed array of the batched eye ``build`` asks for, chunked as
        `_chunks_of` says.

        Raises
        ------
        ValueError
            ``chunks`` is not a regular chunking of the shape, or a cubed ``k``
            has another Spec than ``x``.
        """
        cubed = importlib.import_module("cubed")
        shape = build.shape
        dtype = np.dtype(build.dtype)
        spec = _spec_of(build)
        chunks = _chunks_of(build, spec, dtype)
        if 0 in shape:
            return cubed.zeros(shape, dtype=dtype, chunks=chunks, spec=spec)
        sizes = tuple(dim[0] for dim in chunks)
        piece = partial(_piece, sizes=sizes, shape=shape, dtype=dtype)
        if not isinstance(build.k, cubed.Array):  # an int, or host values
            return cubed.map_blocks(
                partial(piece, build.k, whole_k=True),
                dtype=dtype,
                chunks=chunks,
                spec=spec,
            )
        k = lazy_k(build.k, shape[:-2], chunks[:-2], cubed.from_array)
        return importlib.import_module("cubed.core.ops").general_blockwise(
            piece,
            partial(_k_key, name=k.name, numblocks=k.numblocks),
            k,
            shapes=[shape],
            dtypes=[dtype],
            chunkss=[chunks],
        )


def _piece(
    k: Any,
    *_virtual: Any,
    sizes: tuple[int, ...],
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    block_id: Any,
    whole_k: bool = False,
) -> Any:
    """The block at ``block_id`` (in chunks of ``sizes``) of an eye of
    ``shape``. ``k``: an int; or (``whole_k``, from ``map_blocks``, which
    passes its virtual block after it) the whole host ``k``, of which the
    block's slice is read (it travels with the function, as
    ``cubed.from_array`` ships its array, but with no operation of its
    own); else the block of a cubed ``k`` (`_k_key`)."""
    starts = [i * s for i, s in zip(block_id, sizes, strict=True)]
    piece = tuple(min(s, n - a) for a, s, n in zip(starts, sizes, shape, strict=True))
    if whole_k and not isinstance(k, int):
        slices = [slice(a, a + p) for a, p in zip(starts, piece, strict=True)]
        k = k[along_batch(k.shape, shape[:-2], slices, lambda n: slice(None))]
    return block(piece, k, out_dtype=dtype, shift=starts[-2] - starts[-1])


def _k_key(out_key: Any, *, name: str, numblocks: tuple[int, ...]) -> Any:
    """The block of ``k`` (of ``numblocks``) an output block reads: the one
    at its batch coordinates, 0 along a dimension where ``k`` broadcasts."""
    blockwise = importlib.import_module("cubed.primitive.blockwise")
    coords = out_key.coords[-2 - len(numblocks) : -2]
    coords = tuple(c if n > 1 else 0 for c, n in zip(coords, numblocks, strict=True))
    return blockwise.FunctionArgs(
        blockwise.ChunkKey(name, coords), output_name=out_key.name
    )


def _spec_of(build: Build) -> Any:
    """The Spec: ``x``'s, a cubed ``k``'s, or cubed's config's."""
    cubed = importlib.import_module("cubed")
    if build.like is not None:
        spec = build.like.spec
        if isinstance(build.k, cubed.Array) and build.k.spec != spec:
            msg = f"k's Spec ({build.k.spec}) is not x's ({spec}): cubed computes one"
            raise ValueError(msg)
        return spec
    if isinstance(build.k, cubed.Array):
        return build.k.spec
    return importlib.import_module("cubed.spec").spec_from_config(cubed.config)


def _task(spec: Any, piece: int, per_matrix_k: bool) -> tuple[int, int, int]:
    """Under ``spec``: a task's bytes for chunks; what it spends per byte of
    a chunk an element-wise op reads and writes (cubed counts buffers per
    chunk read and written: more on cloud storage); and per matrix (or
    piece of one) of ``piece`` bytes, the larger of such an op on the eye
    and the eye itself (a virtual empty block read, or one int64 of ``k``)."""
    copies = importlib.import_module("cubed.primitive.memory").get_buffer_copies(spec)
    read, write = copies.read + 1, copies.write + 1
    budget = max(0, int(spec.allowed_mem) - int(spec.reserved_mem) - _MARGIN)
    cost = piece * (read + write)
    if per_matrix_k:
        cost = max(cost, _K_ITEMSIZE * read + piece * write)
    return budget, read + write, cost


def fits(
    spec: Any, chunksize: tuple[int, ...], itemsize: int, per_matrix_k: bool
) -> bool:
    """Whether a task on a chunk of ``chunksize`` fits ``spec``."""
    piece = math.prod(chunksize[-2:]) * itemsize
    budget, _, cost = _task(spec, piece, per_matrix_k)
    return math.prod(chunksize[:-2]) * cost <= budget


def _chunks_of(build: Build, spec: Any, dtype: np.dtype[Any]) -> Chunks:
    """The output's chunks: ``x``'s where a task on them fits the Spec (as
    ``cubed.zeros_like`` keeps them); else the caller's, or "auto" within
    the Spec's limit; regular, as cubed stores arrays."""
    shape, like = build.shape, build.like
    per_matrix_k = not isinstance(build.k, int)
    if like is not None and fits(spec, like.chunksize, dtype.itemsize, per_matrix_k):
        return tuple(tuple(int(c) for c in dim) for dim in like.chunks)
    # The largest chunk in bytes, and whether a chunk holds whole matrices.
    m = max(1, shape[-2] * shape[-1] * dtype.itemsize)
    budget, per_byte, per_matrix = _task(spec, m, per_matrix_k)
    if not budget:
        # No task fits (reserved_mem takes it all): cubed's own chunks, for
        # cubed to refuse with its own message when computed.
        limit, whole = _AUTO_BYTES, m <= _AUTO_BYTES
    elif per_matrix > budget or m > _AUTO_BYTES:
        # One matrix is more than a task (or than cubed's chunk): split it
        # (its k, 8 bytes per piece, is in the margin).
        limit, whole = min(_AUTO_BYTES, budget // per_byte), False
    else:
        limit, whole = min(_AUTO_BYTES, budget // per_matrix * m), True
    chunks = build.chunks
    bad = partial(refusal, chunks, f"for cubed of {shape}")
    if chunks is None:
        chunks = "auto" if whole else 1
    matrix = shape[-2:] if whole else ("auto", "auto")
    normalize = importlib.import_module("cubed.utils").normalize_chunks
    found = read(
        normalize, chunks, shape, dtype, matrix, bad, batch_only=False, limit=limit
    )
    for dim in found:
        # cubed stores in Zarr: equal chunks, the last no larger.
        if any(c != dim[0] for c in dim[:-1]) or dim[-1] > dim[0]:
            msg = f"cubed's chunks are regular; this gives {show(dim, 60)}"
            raise bad(msg)
    return found
