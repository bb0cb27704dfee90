"""NumPy's builds for one offset per matrix, for the NumPy backend's one
build (`numpy`), each where it costs least on any machine:

- a small output (up to `MASK_ELEMENTS`): NumPy's own idiom, the mask
  ``(c - r) == k`` cast, in four calls (each method below takes more calls
  than such an output costs to write);
- matrices at most 32 bytes wide: each copied from a table of the matrix
  of every diagonal (`by_table` says why that wins);
- else zeros, then the ones written at computed indices (`fill`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["MASK_ELEMENTS", "by_table", "fill", "whole"]

# Per-matrix offsets: at most this many rows or ones are indexed at a time
# (a few int64 index arrays of this length: about 16 MiB at most).
_INDEX_BLOCK = 1 << 18
# Outputs up to this many elements are NumPy's mask, in fewer calls than
# the others (measured side by side on 2 cores, float32, against the mask:
# the rows' indices 16x16x16 1.13x, 8x32x32 0.80x, 32x32x32 0.51x,
# 4096x64x64 0.64x; the table 256x3x3 1.2x).
MASK_ELEMENTS = 1 << 12
_NDARRAY = np.ndarray


def whole(k: np.ndarray[Any, Any], shape: tuple[int, ...], dtype: Any, out: Any) -> Any:
    """The output written whole, by the mask or the table where either is
    the cheapest, into a fresh C-contiguous array or a C-contiguous ``out``;
    else None (``k``: clamped into ``[-R, C]`` where the output is larger
    than `MASK_ELEMENTS`)."""
    elements = math.prod(shape)
    if not elements:  # nothing to write: no arange of a dimension up to 2**63
        return None
    if elements <= MASK_ELEMENTS:
        n_rows, n_cols = shape[-2], shape[-1]
        # (Array methods and operators: NumPy's functions are Python
        # wrappers, each a call more.)
        cols = np.arange(n_cols)
        rows = cols if n_rows == n_cols else np.arange(n_rows)
        hit = (cols - rows[:, None]) == k[..., None, None]
        if out is None and hit.shape == shape:  # k holds every matrix's
            return hit.astype(dtype, order="C", copy=False)
        a = np.empty(shape, dtype) if out is None else out
        np.copyto(a, hit, casting="unsafe")  # (broadcast over the batch)
        return a
    if by_table(shape, dtype.itemsize):
        a = np.empty(shape, dtype) if out is None else out
        _gather(k, a)
        return a
    return None


def fill(a: np.ndarray[Any, Any], k: np.ndarray[Any, Any]) -> None:
    """Write diagonal ``k[b]`` of matrix ``b`` of a zeroed ``a``, for every
    ``b`` at once, by blocks of at most ``_INDEX_BLOCK`` rows (the scratch
    stays small whatever the batch): no pass per distinct offset.

    C-contiguous: each row's one at its flat position ``row * C + r + k``,
    those inside the matrix kept (about eight calls a block; the
    (matrix, row, column) of each one, below, costs twice as many).
    Otherwise those indices, written through ``a``'s own strides.
    """
    n_rows, n_cols = a.shape[-2:]
    batch = a.shape[:-2]
    # (np.broadcast_to is a Python wrapper: skipped where k is the batch's.)
    offsets = (k if k.shape == batch else np.broadcast_to(k, batch)).reshape(-1)
    if a.flags.c_contiguous:
        flat, steps = a.reshape(-1), np.arange(n_rows)
        per_block = max(1, _INDEX_BLOCK // max(1, n_rows))
        for first in range(0, offsets.size, per_block):
            # (k lies in [-R, C]: a row's column r + k fits int64.)
            cols = offsets[first : first + per_block, None] + steps
            start = first * n_rows * n_cols  # each row's start, one step a row
            where = np.arange(start, start + cols.size * n_cols, n_cols)
            where += cols.reshape(-1)
            # Inside the row: 0 <= column < C, one comparison (a negative
            # column read as unsigned is past any C).
            inside = cols.reshape(-1).view(np.uint64) < n_cols
            flat[where[inside]] = 1
        return
    per_block = max(1, _INDEX_BLOCK // max(1, min(n_rows, n_cols)))
    # (Array methods, not NumPy's functions of the same name: those are
    # Python wrappers, each a call more.)
    for first in range(0, offsets.size, per_block):
        kb = offsets[first : first + per_block]
        r0, c0 = np.maximum(-kb, 0), np.maximum(kb, 0)
        # (k lies in [-R, C]: no length is negative.)
        lengths = np.minimum(n_rows - r0, n_cols - c0)
        total = int(lengths.sum())
        if total == 0:
            continue
        # Each one's position along its own diagonal: 0, 1, ... per matrix.
        run_starts = lengths.cumsum() - lengths
        matrix = np.arange(first, first + kb.size).repeat(lengths)
        step = np.arange(total) - run_starts.repeat(lengths)
        rows = r0.repeat(lengths) + step
        cols = c0.repeat(lengths) + step
        # An index array per batch dimension longer than 1 only: NumPy
        # takes at most 63, and such dimensions are few (the output fits
        # memory), where a batch of 62 dimensions may have 62 of size 1.
        index: list[Any] = list(np.unravel_index(matrix, batch))
        index = [i if n > 1 else 0 for i, n in zip(index, batch, strict=True)]
        a[(*index, rows, cols)] = 1


def by_table(shape: tuple[int, ...], itemsize: int) -> bool:
    """Whether one offset per matrix is best copied from a table of every
    diagonal's matrix (`_gather`): where a matrix's longest side holds at
    most 32 bytes, and the table is no larger than the output.

    Why on every machine: the index method holds five int64 (40 bytes) of
    scratch per one, at least 40 / 32 of the output's bytes here, in about
    twenty calls; the table's copy writes the output once, in about six,
    from a table at most the output's size."""
    *batch, n_rows, n_cols = shape
    return (
        max(n_rows, n_cols) * itemsize <= 32
        and n_rows + n_cols + 1 <= math.prod(batch)
        and min(n_rows, n_cols) > 0
    )


def _gather(k: np.ndarray[Any, Any], out: np.ndarray[Any, Any]) -> None:
    """Fill a C-contiguous ``out`` with the matrix of diagonal ``k[b]`` at each
    ``b``, copied from a table of the matrix of every diagonal, ``-R`` to
    ``C`` (``k`` is clamped into that range)."""
    n_rows, n_cols = out.shape[-2:]
    diff = np.arange(n_cols) - np.arange(n_rows)[:, None]
    table = (diff == np.arange(-n_rows, n_cols + 1)[:, None, None]).astype(out.dtype)
    # (A view where k holds every matrix's offset, as the index method reads
    # it; its rows are taken by blocks, so the scratch stays small.)
    batch = out.shape[:-2]
    offsets = (k if k.shape == batch else np.broadcast_to(k, batch)).reshape(-1)
    matrices = out.reshape(-1, n_rows, n_cols)
    for first in range(0, offsets.size, _INDEX_BLOCK):
        block = slice(first, first + _INDEX_BLOCK)
        # mode="clip": no bounds check (k is within them), and no buffering.
        rows = offsets[block] + n_rows
        np.take(table, rows, axis=0, out=matrices[block], mode="clip")
