"""Cubed's chunks for eyelike's output: the caller's ``chunks=`` (any form
``cubed`` accepts, for the batch dimensions or for the whole shape), or the
default, bounded by the Spec so that every task fits ``allowed_mem``.

The default is cubed's own "auto" chunking (its normaliser, and its 128 MiB
ceiling), with a smaller ceiling where the Spec demands it: a chunk of the
eye, and a chunk of an element-wise result of it (``x + eye``), must fit
``allowed_mem`` as cubed projects a task's memory. ``cubed.zeros`` needs no
such bound (its chunks are virtual, never written by a task); an eye is
written, so it must have it, or cubed refuses to compute any of it. Whole
matrices per chunk where one matrix fits a task; where it does not, one
matrix per chunk along the batch, and the matrix itself chunked (as
``cubed.eye`` chunks a large matrix).
"""

from __future__ import annotations

import importlib
import math
import operator
from typing import Any

import numpy as np

from ..._validate.integers import is_bool_like
from ..._validate.text import show

__all__ = ["Chunks", "default_limit", "fits", "library", "out_chunks"]

Chunks = tuple[tuple[int, ...], ...]

# cubed's "auto" chunk size (its normaliser's fixed ceiling, as cubed.zeros).
_AUTO_BYTES = 128 * 2**20
# Beside the chunks: the block-id array's chunk, and slack (bytes).
_MARGIN = 1024
_K_ITEMSIZE = 8  # a per-matrix k is read as int64


def library(name: str) -> Any:
    """A module of cubed, imported on first use (typed ``Any``: a NumPy-only
    install, and the type checker's, has no cubed)."""
    return importlib.import_module(name)


def _bad(chunks: Any, shape: tuple[int, ...], why: str) -> ValueError:
    msg = f"chunks={show(chunks, 120)} is not a chunking for cubed of {shape}: {why}"
    return ValueError(msg)


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


def default_limit(spec: Any, matrix_bytes: int, per_matrix_k: bool) -> tuple[int, bool]:
    """The largest chunk in bytes, and whether a chunk holds whole matrices.

    A task of cubed holds, per chunk of ``c`` bytes, its input read
    (``c`` times ``read + 1`` buffers) and its output written (``c`` times
    ``write + 1``): for an element-wise op on the eye, and for the eye
    itself (read from a virtual empty array of its own chunks). A
    per-matrix ``k`` is read beside the output: 8 bytes per matrix in place
    of the virtual input's ``matrix_bytes``.
    """
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


def _full_spec(
    chunks: Any, shape: tuple[int, ...], whole: bool
) -> tuple[Any, str | None]:
    """``chunks`` for the whole shape, as cubed's normaliser takes it, and a
    byte limit for "auto" given as a size ("64MiB"; None: the default's)."""
    nb = len(shape) - 2
    matrix: tuple[Any, ...] = tuple(shape[-2:]) if whole else ("auto", "auto")
    limit = None
    if chunks is None:
        chunks = "auto" if whole else 1
    if isinstance(chunks, str) and chunks != "auto":
        limit, chunks = chunks, "auto"
    if isinstance(chunks, dict):
        spec: dict[int, Any] = {nb: matrix[0], nb + 1: matrix[1]}
        for axis, value in chunks.items():
            try:
                i = operator.index(axis)
            except TypeError:
                i = len(shape)  # reported below
            if isinstance(axis, (bool, np.bool_)) or not -len(shape) <= i < len(shape):
                why = f"axis {show(axis)} is not one of its {len(shape)} dimensions"
                raise _bad(chunks, shape, why)
            spec[i % len(shape)] = value
        return tuple(spec.get(i, "auto") for i in range(len(shape))), limit
    if isinstance(chunks, (tuple, list)):
        if len(chunks) == nb:
            return (*chunks, *matrix), limit
        if len(chunks) == nb + 2:
            return tuple(chunks), limit
        why = (
            f"expected {nb} entries (one per batch dimension) or {nb + 2} (one "
            f"per dimension), got {len(chunks)}"
        )
        raise _bad(chunks, shape, why)
    return (*(chunks,) * nb, *matrix), limit


def _flat(spec: Any) -> list[Any]:
    """The values of a spec (nested one level: a dimension's chunk sizes)."""
    out: list[Any] = []
    for value in spec:
        out += list(value) if isinstance(value, (tuple, list)) else [value]
    return out


def out_chunks(
    chunks: Any,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    limit: int,
    whole: bool,
) -> Chunks:
    """The output's chunks: regular (as cubed stores arrays), each dimension's
    sizes summing to it; "auto" within ``limit`` bytes."""
    normalize_chunks = library("cubed.utils").normalize_chunks
    spec, size = _full_spec(chunks, shape, whole)
    for value in _flat(spec):
        if is_bool_like(value):
            raise _bad(chunks, shape, "a bool is not a chunk size")
        if isinstance(value, (tuple, list)) or not (
            (isinstance(value, str) and value == "auto")
            or (isinstance(value, (int, np.integer)) and value >= -1)
        ):
            why = "a chunk size is a positive int, -1 (the whole dimension) or 'auto'"
            raise _bad(chunks, shape, f"{why}; got {show(value)}")
    if math.prod(shape) == 0:
        # "auto" divides by the chunk's size; with no elements, one chunk.
        spec = tuple(-1 if isinstance(v, str) else v for v in spec)
    try:
        normal = normalize_chunks(spec, shape, limit=size or limit, dtype=dtype)
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise _bad(chunks, shape, str(exc) or type(exc).__name__) from exc
    for dim, n in zip(normal, shape, strict=True):
        if sum(dim) != n or any(c < 0 for c in dim):
            raise _bad(chunks, shape, f"it gives chunks {show(tuple(dim), 60)}")
        # cubed stores in Zarr: equal chunks, the last no larger.
        if any(c != dim[0] for c in dim[:-1]) or dim[-1] > dim[0]:
            why = f"cubed's chunks are regular; this gives {show(tuple(dim), 60)}"
            raise _bad(chunks, shape, why)
    return tuple(tuple(int(c) for c in dim) for dim in normal)
