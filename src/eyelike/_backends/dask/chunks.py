"""Dask's ``chunks=`` for eyelike's output: any form ``dask.array`` accepts,
for the batch dimensions (every chunk holds whole matrices), refused with a
message naming ``chunks`` where it is not a chunking of them; and the chunks
of a per-matrix ``k`` that line up with the output's."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..._validate.integers import is_bool_like
from ..._validate.text import show

__all__ = ["Chunks", "batch_chunks", "k_chunks"]

Chunks = tuple[tuple[int, ...], ...]


def _bad_chunks(chunks: Any, batch: tuple[int, ...], why: str) -> ValueError:
    msg = (
        f"chunks={show(chunks, 120)} is not a chunking of the batch dimensions "
        f"{batch} (every chunk holds whole matrices): {why}"
    )
    return ValueError(msg)


# A chunks spec nests at most a dict of sequences of sizes: three levels.
_MAX_DEPTH = 3


def _leaves(spec: Any) -> list[Any] | None:
    """The values a chunks spec holds (dict values and nested sequences
    opened), level by level without recursion; None where it nests deeper
    than any chunks spec (or holds itself), which would otherwise overflow
    the stack here or in Dask."""
    leaves, level = [], [spec]
    for _ in range(_MAX_DEPTH + 1):
        inner: dict[int, Any] = {}
        for item in level:
            if isinstance(item, dict):
                inner.update((id(v), v) for v in item.values())
            elif isinstance(item, (tuple, list)):
                inner.update((id(v), v) for v in item)
            else:
                leaves.append(item)
        if not inner:
            return leaves
        level = list(inner.values())
    return None


def _has(spec: Any, bad: Any) -> bool:
    """Whether a chunks spec holds a value ``bad`` says yes to, anywhere
    (dict values and nested sequences too)."""
    leaves = _leaves(spec)
    return leaves is not None and any(bad(v) for v in leaves)


def _below_minus_one(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and bool(value < -1)


def _full_spec(
    chunks: Any, batch: tuple[int, ...], n_rows: int, n_cols: int
) -> tuple[Any, Any]:
    """``chunks`` as a spec for the whole output, and the size limit to use.

    Returns a spec that ``normalize_chunks`` accepts for ``batch + (R, C)``
    (whole matrices per chunk unless the caller's full-rank spec says
    otherwise, which is checked after normalising), and a byte limit for
    ``"auto"`` (None: Dask's ``array.chunk-size``).
    """
    nb = len(batch)
    limit = None
    if chunks is None:
        chunks = "auto"
    if isinstance(chunks, str) and chunks != "auto":
        # A size such as "64MiB": "auto" chunks of at most that many bytes.
        limit, chunks = chunks, "auto"
    if isinstance(chunks, dict):
        spec: dict[int, Any] = {}
        for axis, value in chunks.items():
            try:
                i = operator.index(axis)
            except TypeError:
                i = nb  # reported below
            if isinstance(axis, (bool, np.bool_)) or not -nb <= i < nb:
                why = f"axis {show(axis)} is not one of the {nb} batch dimensions"
                raise _bad_chunks(chunks, batch, why)
            spec[i % nb] = value
        return {**spec, nb: n_rows, nb + 1: n_cols}, limit
    if isinstance(chunks, (tuple, list)):
        if len(chunks) == nb:
            return (*chunks, n_rows, n_cols), limit
        if len(chunks) == nb + 2:
            return tuple(chunks), limit
        why = f"expected {nb} entries (one per batch dimension), got {len(chunks)}"
        raise _bad_chunks(chunks, batch, why)
    # One value (an int, -1, "auto") for every batch dimension.
    return (*(chunks,) * nb, n_rows, n_cols), limit


def batch_chunks(
    chunks: Any, shape: tuple[int, ...], dtype: np.dtype[Any], like: Any
) -> Chunks:
    """The chunks of the output along the batch dimensions."""
    from dask.array.core import normalize_chunks

    batch, (n_rows, n_cols) = shape[:-2], shape[-2:]
    if like is not None:
        # Keep x's batch chunks; its chunking of the matrix dims is dropped.
        return tuple(tuple(int(c) for c in dim) for dim in like.chunks[:-2])
    if _leaves(chunks) is None:
        why = f"it nests more than {_MAX_DEPTH} levels deep"
        raise _bad_chunks(chunks, batch, why)
    if _has(chunks, is_bool_like):
        raise _bad_chunks(chunks, batch, "a bool is not a chunk size")
    if _has(chunks, _below_minus_one):
        # Dask's normaliser lets some through (-5 along 64 gives one chunk of
        # -1), to fail at compute, inside a task.
        why = "a chunk size is a positive int, or -1 for the whole dimension"
        raise _bad_chunks(chunks, batch, why)
    spec, limit = _full_spec(chunks, batch, n_rows, n_cols)
    if math.prod(shape) == 0:
        # "auto" divides by the chunk's size; with no elements, one chunk.
        if isinstance(spec, dict):
            spec = {i: -1 if v == "auto" else v for i, v in spec.items()}
        else:
            spec = tuple(-1 if isinstance(v, str) and v == "auto" else v for v in spec)
    try:
        normal = normalize_chunks(spec, shape, limit=limit, dtype=dtype)
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise _bad_chunks(chunks, batch, str(exc) or type(exc).__name__) from exc
    # Whatever else the normaliser lets through is refused here, not at
    # compute.
    for dim, size in zip(normal, shape, strict=True):
        if any(c < 0 for c in dim) or sum(dim) != size:
            why = (
                "a chunk size is a positive int, or -1 for the whole dimension; "
                f"this one gives chunks {show(tuple(dim), 60)} along a dimension "
                f"of {size}"
            )
            raise _bad_chunks(chunks, batch, why)
    if tuple(normal[-2:]) != ((n_rows,), (n_cols,)):
        why = f"the matrix dimensions would be split as {normal[-2:]}"
        raise _bad_chunks(chunks, batch, why)
    return tuple(tuple(int(c) for c in dim) for dim in normal[:-2])


def k_chunks(k_shape: tuple[int, ...], batch: tuple[int, ...], bc: Chunks) -> Chunks:
    """Chunks for ``k`` (its dims aligned with the last batch dims): those of
    the output where ``k`` has the full size, one block where it broadcasts."""
    offset = len(batch) - len(k_shape)
    return tuple(
        bc[offset + j] if size == batch[offset + j] else (size,)
        for j, size in enumerate(k_shape)
    )
