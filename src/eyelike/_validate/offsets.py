"""The diagonal offset ``k``: one int, or one per matrix, clamped.

Every ``k >= n_cols`` (or ``<= -n_rows``) gives all zeros, so clamping into
``[-n_rows, n_cols]`` keeps the meaning and makes ``k`` fit any index type:
nothing truncates later, whatever the caller's integer width.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from .integers import (
    MAX_BATCH_DIMS,
    index_or_none,
    is_bool_like,
    is_time,
    nesting_depth,
    not_data,
)
from .text import show

__all__ = ["check_broadcast", "host_offsets", "is_library_array", "refuse_dtype"]


def is_library_array(k: Any) -> bool:
    """Whether ``k`` is an array of an array library other than host data (a
    NumPy array, a sequence or a scalar, which every backend takes)."""
    return hasattr(k, "shape") and not isinstance(
        k, (np.ndarray, np.generic, type, ModuleType)
    )


def host_offsets(
    k: Any, batch: tuple[int, ...], bounds: tuple[int, int]
) -> int | np.ndarray[Any, Any]:
    """A ``k`` that is not `is_library_array`, clamped into ``bounds``.

    Returns a Python int for a scalar ``k`` (a 0-D array included: one
    offset for every matrix); else an int64 NumPy array whose shape
    broadcasts to ``batch``.
    """
    lo, hi = bounds
    if type(k) is int:
        return min(max(k, lo), hi)
    if not_data(k) or is_time(k):
        msg = f"k must be an integer or an integer array; got {show(k)}"
        raise TypeError(msg)
    if not isinstance(k, (list, tuple, np.ndarray)):
        return min(max(_scalar(k), lo), hi)
    if (
        isinstance(k, (list, tuple))
        and nesting_depth(k, MAX_BATCH_DIMS) > MAX_BATCH_DIMS
    ):
        # Refused before NumPy reads it: a deeper nest overflows its
        # conversion, or becomes an array of lists. (A shallower one that is
        # still too deep is refused below, with its shape.)
        rank = len(batch)
        msg = (
            f"k is nested more than {MAX_BATCH_DIMS} levels deep; one offset per "
            f"matrix broadcasts to batch_shape {batch} with at most {rank} "
            f"level{'' if rank == 1 else 's'} of nesting"
        )
        raise ValueError(msg)
    arr = _host_array(k)
    check_broadcast(arr.shape, batch)
    clamped = _clamp_host(arr, lo, hi)
    return int(clamped) if clamped.ndim == 0 else clamped


def refuse_dtype(k: Any, integral: bool) -> None:
    """Refuse a library's ``k`` array that is not of an integer dtype
    (``integral``: its namespace's ``isdtype(k.dtype, "integral")``)."""
    if is_bool_like(k) or not integral:
        msg = f"k must be an integer array; got dtype {k.dtype}"
        raise TypeError(msg)


def check_broadcast(shape: tuple[Any, ...], batch: tuple[int, ...]) -> None:
    """Refuse a ``k`` of ``shape`` that does not broadcast to ``batch``."""
    if not _broadcasts_to(tuple(shape), batch):
        msg = f"k of shape {tuple(shape)} does not broadcast to batch_shape {batch}"
        raise ValueError(msg)


def _broadcasts_to(shape: tuple[int, ...], batch: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to exactly ``batch`` (plain comparisons,
    which torch.compile can trace with symbolic sizes too)."""
    if len(shape) > len(batch):
        return False
    tail = batch[len(batch) - len(shape) :]
    # ``s == b`` first: for one symbolic size it is True at once, where
    # ``s == 1`` would be a guard that the size is not 1.
    return all(s == b or s == 1 for s, b in zip(shape, tail, strict=True))


def _scalar(k: Any) -> int:
    """A scalar ``k`` as a Python int, under the one integer rule."""
    v = index_or_none(k)
    if v is None:
        if is_bool_like(k):
            msg = f"k must be an integer or an integer array, not a bool; got {show(k)}"
        else:
            msg = (
                f"k must be an integer or an integer array; got "
                f"{type(k).__name__} {show(k)}"
            )
        raise TypeError(msg)
    return v


def _host_array(k: Any) -> np.ndarray[Any, Any]:
    """A NumPy integer (or object-of-int) array from a NumPy array or sequence."""
    if isinstance(k, np.ndarray):
        if k.dtype.kind not in "iu":
            msg = f"k must be an integer array; got dtype {k.dtype}"
            raise TypeError(msg)
        return k
    # dtype=object: NumPy would silently turn [2**63, -1] into floats.
    try:
        arr = np.asarray(k, dtype=object)
    except TypeError:  # an entry NumPy cannot hold at all
        msg = f"k must hold integers only; got {show(k)}"
        raise TypeError(msg) from None
    except ValueError:
        msg = f"k must be a rectangular sequence of integers; got {show(k)}"
        raise ValueError(msg) from None
    entries = []
    for v in arr.ravel().tolist():
        entry = index_or_none(v)
        if entry is None:  # at the first: later entries' __index__ never runs
            msg = f"k must hold integers only; got {show(k)}"
            raise TypeError(msg)
        entries.append(entry)
    arr.ravel()[:] = entries
    return arr


def _clamp_host(arr: np.ndarray[Any, Any], lo: int, hi: int) -> np.ndarray[Any, Any]:
    if arr.dtype == object:
        flat = [min(max(int(v), lo), hi) for v in arr.ravel().tolist()]
        shaped: np.ndarray[Any, Any] = np.reshape(np.array(flat, np.int64), arr.shape)
        return shaped
    info = np.iinfo(arr.dtype)
    clipped: np.ndarray[Any, Any] = np.clip(arr, max(lo, info.min), min(hi, info.max))
    as_int64: np.ndarray[Any, Any] = clipped.astype(np.int64)
    return as_int64
