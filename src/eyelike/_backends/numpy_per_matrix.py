"""NumPy's builds for one offset per matrix, for the NumPy backend's one
build (`numpy`), each where it costs least on any machine:

- a small output (up to `MASK_ELEMENTS`): NumPy's own idiom, the mask
  ``(c - r) == k`` cast, in four calls (each method below takes more calls
  than such an output costs to write);
- matrices at most 32 bytes wide: each copied from a table of the matrix
  of every diagonal (`whole` says why that wins);
- else zeros, then the ones written at computed indices (`fill`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["MASK_ELEMENTS", "fill", "whole"]

# At most this many rows (`fill`) or matrices (the table) are indexed at a
# time (a few int64 index arrays of this length: about 16 MiB at most).
_INDEX_BLOCK = 1 << 18
# Outputs up to this many elements are NumPy's mask, in fewer calls than
# the others (measured side by side on 2 cores, float32, against the mask:
# the rows' indices 16x16x16 1.13x, 8x32x32 0.80x, 32x32x32 0.51x,
# 4096x64x64 0.64x; the table 256x3x3 1.2x).
MASK_ELEMENTS = 1 << 12


def whole(k: np.ndarray[Any, Any], shape: tuple[int, ...], dtype: Any, out: Any) -> Any:
    """The output written whole, by the mask or the table where either is
    the cheapest, into a fresh C-contiguous array or a C-contiguous ``out``;
    else None (``k``: clamped into ``[-R, C]`` where the output is larger
    than `MASK_ELEMENTS`)."""
    elements = math.prod(shape)
    if not elements:  # nothing to write: no arange of a dimension up to 2**63
        return None
    n_rows, n_cols = shape[-2], shape[-1]
    if elements <= MASK_ELEMENTS:
        diagonals = k
    elif (
        max(n_rows, n_cols) * dtype.itemsize > 32
        or (n_rows + n_cols + 1) * n_rows * n_cols > elements
    ):
        # Not the table (a matrix over 32 bytes wide, or a table larger than
        # the output). Where taken it wins on every machine: `fill` holds 40
        # bytes of scratch per one (at least 40 / 32 of the output's bytes)
        # in about twenty calls; the table's copy writes it once, in six.
        return None
    else:
        diagonals = np.arange(-n_rows, n_cols + 1)  # the table: -R to C
    # The mask (c - r) == k. (Array methods and operators: NumPy's
    # functions are Python wrappers, each a call more.)
    cols = np.arange(n_cols)
    rows = cols if n_rows == n_cols else np.arange(n_rows)
    hit = (cols - rows[:, None]) == diagonals[..., None, None]
    if diagonals is k:  # a small output: the mask is the output itself
        if out is None and hit.shape == shape:  # k holds every matrix's
            return hit.astype(dtype, order="C", copy=False)
        a = np.empty(shape, dtype) if out is None else out
        np.copyto(a, hit, casting="unsafe")  # (broadcast over the batch)
        return a
    # Each matrix copied from the table's row k + R, by blocks (a view where
    # k holds every matrix's offset, as `fill` reads it): the scratch stays
    # small. mode="clip": no bounds check (k is within them), no buffering.
    table = hit.astype(dtype)
    a = np.empty(shape, dtype) if out is None else out
    batch = shape[:-2]
    offsets = (k if k.shape == batch else np.broadcast_to(k, batch)).reshape(-1)
    matrices = a.reshape(-1, n_rows, n_cols)
    for first in range(0, offsets.size, _INDEX_BLOCK):
        block = slice(first, first + _INDEX_BLOCK)
        rows = offsets[block] + n_rows
        np.take(table, rows, axis=0, out=matrices[block], mode="clip")
    return a


def fill(a: np.ndarray[Any, Any], k: np.ndarray[Any, Any]) -> None:
    """Write diagonal ``k[b]`` of matrix ``b`` of a zeroed ``a``, for every
    ``b`` at once, by blocks of at most ``_INDEX_BLOCK`` rows (the scratch
    stays small whatever the batch): no pass per distinct offset. Row
    ``r``'s one is in column ``r + k``, where that is inside the row:
    written at its flat position where ``a`` is C-contiguous (about eight
    calls a block), else at its (matrix, row, column)."""
    n_rows, n_cols = a.shape[-2:]
    batch = a.shape[:-2]
    # (np.broadcast_to is a Python wrapper: skipped where k is the batch's.)
    offsets = (k if k.shape == batch else np.broadcast_to(k, batch)).reshape(-1)
    flat = a.reshape(-1) if a.flags.c_contiguous else None
    steps = np.arange(n_rows)
    per_block = max(1, _INDEX_BLOCK // max(1, n_rows))
    for first in range(0, offsets.size, per_block):
        # (k lies in [-R, C]: a row's column r + k fits int64.)
        cols = offsets[first : first + per_block, None] + steps  # [matrix, row]
        # Inside the row: 0 <= column < C, one comparison (a negative
        # column read as unsigned is past any C).
        inside = cols.view(np.uint64) < n_cols
        if flat is not None:
            start = first * n_rows * n_cols  # each row's start, one step a row
            where = np.arange(start, start + cols.size * n_cols, n_cols)
            where += cols.reshape(-1)
            flat[where[inside.reshape(-1)]] = 1
            continue
        # Other strides: each one's (matrix, row, column), the matrix's
        # index an array only in a batch dimension longer than 1 (NumPy takes
        # at most 63 index arrays; a batch of 62 dimensions may have 62 of
        # size 1).
        matrix, rows = inside.nonzero()
        index = np.unravel_index(matrix + first, batch)
        index = tuple(i if n > 1 else 0 for i, n in zip(index, batch, strict=True))
        a[(*index, rows, cols[matrix, rows])] = 1
