"""The diagonal offset ``k``: one int, or one per matrix, clamped.

Every ``k >= n_cols`` (or ``<= -n_rows``) gives all zeros, so clamping into
``[-n_rows, n_cols]`` keeps the meaning and makes ``k`` fit any index type:
nothing truncates later, whatever the caller's integer width.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from .._backends._base import Backend

__all__ = ["clamped_offsets"]


def clamped_offsets(
    k: Any, backend: Backend, batch: tuple[int, ...], n_rows: int, n_cols: int
) -> Any:
    """``k`` clamped into ``[-n_rows, n_cols]``.

    Returns a Python int for a scalar ``k`` (a 0-D array included: one
    offset for every matrix); for an array ``k`` an integer array (NumPy for
    host data, else ``backend``'s own) whose shape broadcasts to ``batch``.
    """
    if type(k) is int:
        if type(n_rows) is int and type(n_cols) is int:  # `_bounds`, inline:
            return min(max(k, -n_rows), n_cols)  # the common call's cost
        lo, hi = _bounds(backend, n_rows, n_cols)
        return min(max(k, lo), hi)
    if not_data(k) or is_time(k):
        msg = f"k must be an integer or an integer array; got {show(k)}"
        raise TypeError(msg)
    is_array = hasattr(k, "shape") and not isinstance(k, np.generic)
    if not is_array and not isinstance(k, (list, tuple)):
        lo, hi = _bounds(backend, n_rows, n_cols)
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
    if isinstance(k, (list, tuple, np.ndarray)):
        arr: Any = _host_array(k)
        k_backend = None
    else:
        from .._backends import backend_of_array

        k_backend = backend_of_array(k, "k")
        if k_backend is not backend:
            arrays = "NumPy" if backend.name == "numpy" else f"NumPy or {backend.name}"
            where = f" (xp={k_backend.module})" if k_backend.module else ""
            msg = (
                f"k is a {k_backend.name} array, but the result is made by "
                f"{backend.name}: give k as an int, a Python sequence or a "
                f"{arrays} array (k.tolist(), say), or make the result with "
                f"{k_backend.name}{where}"
            )
            raise TypeError(msg)
        if is_bool_like(k) or not backend.xp.isdtype(k.dtype, "integral"):
            msg = f"k must be an integer array; got dtype {k.dtype}"
            raise TypeError(msg)
        arr = k
    shape = arr.shape if k_backend is None else k_backend.shape_of(arr, "k")
    if not _broadcasts_to(tuple(shape), batch):
        msg = f"k of shape {tuple(shape)} does not broadcast to batch_shape {batch}"
        raise ValueError(msg)
    if k_backend is None:
        clamped_host = _clamp_host(arr, *_bounds(backend, n_rows, n_cols))
        return int(clamped_host) if clamped_host.ndim == 0 else clamped_host
    return backend.clamp_offsets(arr, n_rows, n_cols)


def _bounds(backend: Backend, n_rows: Any, n_cols: Any) -> tuple[int, int]:
    """What a host ``k`` is clamped into: ``[-n_rows, n_cols]``; for sizes
    known only when the program runs (symbolic), the range of the
    namespace's index type, which holds every size and keeps k's meaning
    (comparing k with a symbolic size would be a guard of the program for
    torch, and undecidable for JAX)."""
    if type(n_rows) is int and type(n_cols) is int:
        return -n_rows, n_cols
    limit = int(backend.xp.iinfo(backend.index_dtype(None)).max)
    return -limit, limit


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
