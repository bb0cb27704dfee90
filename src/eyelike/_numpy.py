"""The NumPy backend: allocate zeroed memory, then write each diagonal
through one strided view (no Python loop over matrices)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

__all__ = ["eye"]


def _diagonal_view(a: np.ndarray[Any, Any], k: int) -> np.ndarray[Any, Any] | None:
    """A writeable view of diagonal ``k`` of every matrix in ``a``, or None."""
    n_rows, n_cols = a.shape[-2:]
    r0, c0 = max(-k, 0), max(k, 0)
    length = min(n_rows - r0, n_cols - c0)
    if length <= 0 or a.size == 0:
        return None
    corner = a[..., r0, c0]
    # Works for any strides of ``a``, so an ``out`` need not be contiguous.
    return as_strided(
        corner,
        shape=(*corner.shape, length),
        strides=(*corner.strides, a.strides[-2] + a.strides[-1]),
    )


def _fill_per_matrix(a: np.ndarray[Any, Any], k: np.ndarray[Any, Any]) -> None:
    """Write diagonal ``k[b]`` of matrix ``b``: one pass per distinct offset."""
    n_rows, n_cols = a.shape[-2:]
    batch = a.shape[:-2]
    kb = np.broadcast_to(k, batch)
    for value in np.unique(kb).tolist():
        r0, c0 = max(-value, 0), max(value, 0)
        length = min(n_rows - r0, n_cols - c0)
        if length <= 0:
            continue
        where = np.nonzero(kb == value)
        steps = np.arange(length)
        index = (*tuple(w[:, None] for w in where), r0 + steps, c0 + steps)
        a[index] = 1


def eye(
    shape: tuple[int, ...],
    k: int | np.ndarray[Any, Any],
    dtype: np.dtype[Any],
    out: np.ndarray[Any, Any] | None,
) -> np.ndarray[Any, Any]:
    """Fill ``out`` (or a new C-contiguous array) with the batched eye."""
    if out is None:
        # calloc: the OS hands out zeroed pages, so zeros cost nothing here.
        a = np.zeros(shape, dtype=dtype)
    else:
        a = out
        a[...] = 0
    if isinstance(k, int):
        one: Any = 1
        target = a
        if a.dtype.type.__module__ == "ml_dtypes":
            # as_strided cannot describe ml_dtypes' types; write their bits.
            target = a.view(f"u{a.dtype.itemsize}")
            one = np.array(1, dtype=a.dtype).view(target.dtype)
        diag = _diagonal_view(target, k)
        if diag is not None:
            diag[...] = one
    elif a.size:
        _fill_per_matrix(a, k)
    return a
