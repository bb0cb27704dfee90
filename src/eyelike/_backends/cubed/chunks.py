"""Cubed's chunks for eyelike's output: ``x``'s, the caller's ``chunks=``
(read by the lazy libraries' one reader, ``dask/chunks.py``), or cubed's
own "auto" (its normaliser, its 128 MiB ceiling) under a ceiling of the
Spec's: a chunk of the eye, and of an element-wise result of it, must fit
``allowed_mem`` as cubed projects a task's memory, or cubed refuses to
compute any of it (``cubed.zeros`` needs no such bound: its chunks are
virtual, never written). Whole matrices per chunk where one fits a task;
else one matrix per chunk, itself chunked (as ``cubed.eye`` chunks one).
"""

from __future__ import annotations

import importlib
import math
from functools import partial
from typing import Any

import numpy as np

from ..._validate.text import show
from .._base import Build
from ..dask.chunks import Chunks, read, refusal

__all__ = ["chunks_of", "fits", "library"]

# cubed's "auto" chunk size (its normaliser's fixed ceiling, as cubed.zeros).
_AUTO_BYTES = 128 * 2**20
# Beside the chunks: the block-id array's chunk, and slack (bytes).
_MARGIN = 1024
_K_ITEMSIZE = 8  # a per-matrix k is read as int64


def library(name: str) -> Any:
    """A module of cubed, imported on first use (typed ``Any``: a NumPy-only
    install, and the type checker's, has no cubed)."""
    return importlib.import_module(name)


def _budget(spec: Any) -> tuple[int, int, int]:
    """A task's bytes for chunks under ``spec``, and the buffers cubed counts
    per chunk read and per chunk written (more on cloud storage)."""
    copies = library("cubed.primitive.memory").get_buffer_copies(spec)
    budget = int(spec.allowed_mem) - int(spec.reserved_mem) - _MARGIN
    return max(0, budget), copies.read + 1, copies.write + 1


def _cost(piece: int, read: int, write: int, per_matrix_k: bool) -> int:
    """A task's bytes per matrix (or piece of one) of ``piece`` bytes: the
    larger of an element-wise op on the eye (read, then written) and the
    eye itself (a virtual empty block read, or one int64 of ``k``)."""
    cost = piece * (read + write)
    if per_matrix_k:
        cost = max(cost, _K_ITEMSIZE * read + piece * write)
    return cost


def fits(
    spec: Any, chunksize: tuple[int, ...], itemsize: int, per_matrix_k: bool
) -> bool:
    """Whether a task on a chunk of ``chunksize`` fits ``spec``."""
    budget, read, write = _budget(spec)
    piece = math.prod(chunksize[-2:]) * itemsize
    return math.prod(chunksize[:-2]) * _cost(piece, read, write, per_matrix_k) <= budget


def _default_limit(
    spec: Any, matrix_bytes: int, per_matrix_k: bool
) -> tuple[int, bool]:
    """The largest chunk in bytes (tasks as `_cost` counts them), and
    whether a chunk holds whole matrices."""
    budget, read, write = _budget(spec)
    m = max(1, matrix_bytes)
    if not budget:
        # No task fits (reserved_mem takes it all): cubed's own chunks, for
        # cubed to refuse with its own message when computed.
        return _AUTO_BYTES, m <= _AUTO_BYTES
    per_matrix = _cost(m, read, write, per_matrix_k)
    if per_matrix > budget or m > _AUTO_BYTES:
        # One matrix is more than a task (or than cubed's chunk): split it
        # (its k, 8 bytes per piece, is in the margin).
        return min(_AUTO_BYTES, budget // (read + write)), False
    return min(_AUTO_BYTES, budget // per_matrix * m), True


def chunks_of(build: Build, spec: Any, dtype: np.dtype[Any]) -> Chunks:
    """The output's chunks: ``x``'s where a task on them fits the Spec (as
    ``cubed.zeros_like`` keeps them); else the caller's, or "auto" within
    the Spec's limit; regular, as cubed stores arrays."""
    shape = build.shape
    per_matrix = not (isinstance(build.k, int) or np.ndim(build.k) == 0)
    like = build.like
    if like is not None and fits(spec, like.chunksize, dtype.itemsize, per_matrix):
        return tuple(tuple(int(c) for c in dim) for dim in like.chunks)
    matrix_bytes = shape[-2] * shape[-1] * dtype.itemsize
    limit, whole = _default_limit(spec, matrix_bytes, per_matrix)
    chunks = build.chunks
    bad = partial(refusal, chunks, f"for cubed of {shape}")
    if chunks is None:
        chunks = "auto" if whole else 1
    matrix = shape[-2:] if whole else ("auto", "auto")
    normalize = library("cubed.utils").normalize_chunks
    found = read(
        normalize, chunks, shape, dtype, matrix, bad, batch_only=False, limit=limit
    )
    for dim in found:
        # cubed stores in Zarr: equal chunks, the last no larger.
        if any(c != dim[0] for c in dim[:-1]) or dim[-1] > dim[0]:
            msg = f"cubed's chunks are regular; this gives {show(dim, 60)}"
            raise bad(msg)
    return found
