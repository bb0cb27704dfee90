"""The diagonal offset ``k``: one int, or one per matrix, clamped.

Every ``k >= n_cols`` (or ``<= -n_rows``) gives all zeros, so clamping into
``[-n_rows, n_cols]`` keeps the meaning and makes ``k`` fit any index type:
nothing truncates later, whatever the caller's integer width.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .dtypes import dtype_name
from .integers import (
    MAX_BATCH_DIMS,
    index_or_none,
    is_array,
    is_masked,
    is_time,
    not_an_integer,
    one_element,
)
from .size import physical_memory
from .text import show

# One name, not a chain: each link is a guard of torch.compile's program.
_NDARRAY = np.ndarray
# A library's clip into bounds of k's own type, cast: `clamp_array`'s.
Clip = Callable[[Any, Any, Any, Any], Any]


def is_library_array(k: Any) -> bool:
    """Whether ``k`` is an array of an array library other than host data (a
    NumPy array, a sequence or a scalar, which every backend takes)."""
    return not isinstance(k, _NDARRAY) and is_array(k)


def host_offsets(
    k: Any, batch: tuple[int, ...], bounds: tuple[int, int]
) -> int | np.ndarray[Any, Any]:
    """A ``k`` that is not `is_library_array`, clamped into ``bounds``: a
    Python int for a scalar (a 0-D array included: one offset for every
    matrix), else an int64 NumPy array that broadcasts to ``batch``."""
    lo, hi = bounds
    if type(k) is int or (isinstance(k, np.integer) and not is_time(k)):
        return min(max(int(k), lo), hi)
    given = k  # (as the caller wrote it, for the messages)
    if isinstance(k, _NDARRAY) and type(k) is not _NDARRAY:
        if is_masked(k):
            raise not_an_integer(k, "k must be an integer or an integer array")
        k = np.asarray(k)  # a subclass's values (a MaskedArray's data), not its class
    if isinstance(k, _NDARRAY) and k.ndim == 0:
        # One offset for every matrix (and torch.compile's NumPy scalar).
        k = one_element(k)
        if isinstance(k, (list, tuple)):  # an object array's one entry
            msg = f"k as a 0-d array must hold one integer; got {show(k)}"
            raise TypeError(msg)
    arr: np.ndarray[Any, Any]
    if isinstance(k, _NDARRAY):
        if k.dtype.kind not in "iu":
            refuse_dtype(k, integral=False)
        arr = clamp_array(np, k, -lo, hi, np.int64, numpy_clip)
    elif _is_sequence(k):  # a list, a tuple, a range, a deque, an array.array
        arr = _sequence(k, batch, lo, hi)
    else:
        v = index_or_none(k)
        if v is None:
            raise not_an_integer(given, "k must be an integer or an integer array")
        return min(max(v, lo), hi)
    check_broadcast(arr.shape, batch)
    return arr


def shifted(k: Any, shift: int, n_rows: int, n_cols: int) -> Any:
    """The offsets of a block of ``n_rows`` by ``n_cols`` (a chunk, a
    shard) at row ``r0``, column ``c0`` of its matrix, ``shift`` being
    ``r0 - c0``, clamped into the block's bounds. ``k``: an int, or an int64
    array clamped into the whole matrix's (adding ``shift`` cannot overflow)."""
    if isinstance(k, int):
        return min(max(k + shift, -n_rows), n_cols)
    return (k + shift).clip(-n_rows, n_cols)


def along_batch(
    k_shape: tuple[int, ...],
    batch: tuple[int, ...],
    each: Sequence[Any],
    whole: Callable[[int], Any],
) -> tuple[Any, ...]:
    """For each dimension of a per-matrix ``k`` of ``k_shape`` (aligned with
    the last of ``batch``): ``each``'s entry for the batch dimension it
    lines up with, or ``whole(n)`` where ``k`` broadcasts along it (a chunk,
    a slice or a sharding of ``k`` by the output's batch layout)."""
    lead = len(batch) - len(k_shape)
    return tuple(
        each[lead + j] if n == batch[lead + j] else whole(n)
        for j, n in enumerate(k_shape)
    )


def refuse_dtype(k: Any, integral: bool) -> None:
    """Refuse a library's ``k`` array that is not of an integer dtype
    (``integral``: its namespace's ``isdtype(k.dtype, "integral")``, which
    the standard makes false for bool). Named without the library's prefix
    (``torch.bool``): the same ``k`` reads alike in every mode, where
    torch.compile traces a NumPy ``k`` as a tensor."""
    if not integral:
        msg = f"k must be an integer array; got dtype {dtype_name(k.dtype) or k.dtype}"
        raise TypeError(msg)


def check_broadcast(shape: tuple[Any, ...], batch: tuple[int, ...]) -> None:
    """Refuse a ``k`` of ``shape`` that does not broadcast to ``batch``."""
    if not broadcasts_to(tuple(shape), batch):
        msg = f"k of shape {tuple(shape)} does not broadcast to batch_shape {batch}"
        raise ValueError(msg)


def broadcasts_to(shape: tuple[int, ...], batch: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to exactly ``batch``, by comparisons
    torch.compile traces; an unknown size of a lazy namespace (None) passes."""
    if len(shape) > len(batch):
        return False
    tail = batch[len(batch) - len(shape) :]
    # ``s == b`` first: ``s == 1`` would guard a symbolic size not to be 1.
    return all(s == b or s == 1 or b is None for s, b in zip(shape, tail, strict=True))


def clamp_array(
    xp: Any, k: Any, n_rows: Any, n_cols: Any, index: Any, clip: Clip
) -> Any:
    """An integer array ``k`` of ``xp`` clamped into ``[-n_rows, n_cols]``,
    as the index dtype ``index`` (which holds every size): the one array
    clamp. ``clip(k, lo, hi, index)`` is the library's clip of ``k`` into
    bounds its own type holds, cast to ``index`` (`numpy_clip`,
    ``Backend._clip``): bounds beyond a narrow type would not fit it, and a
    cast before the clip would wrap a wide one (a uint64 past 2**63, a
    uint32 past 2**31 into int32) into a diagonal."""
    if k.dtype == index:  # (the common k: no range to read, ~1 us on NumPy)
        return clip(k, -n_rows, n_cols, index)
    info = xp.iinfo(k.dtype)
    if type(n_rows) is int and type(n_cols) is int:
        return clip(k, max(-n_rows, info.min), min(n_cols, info.max), index)
    # A size known only when the program runs is not compared with k's
    # type's bounds (a guard of torch's; undecidable for JAX): into the
    # index type's range first, then the sizes.
    fits = xp.iinfo(index)
    k = clip(k, max(info.min, fits.min), min(info.max, fits.max), index)
    return clip(k, -n_rows, n_cols, index)


def numpy_clip(
    k: np.ndarray[Any, Any], lo: int, hi: int, index: Any
) -> np.ndarray[Any, Any]:
    """`clamp_array`'s ``clip`` for NumPy arrays: two ufuncs, the second in
    place (np.clip is a Python wrapper, several times the cost)."""
    wide: np.ndarray[Any, Any] = np.maximum(k, lo)
    np.minimum(wide, hi, out=wide)
    return wide.astype(index, copy=False)


# Nests of up to this many offsets are walked before their size is judged.
_CHEAP_TO_WALK = 1 << 20


def _sequence(k: Any, batch: tuple[int, ...], lo: int, hi: int) -> np.ndarray[Any, Any]:
    """A (nested) sequence of integers as an int64 array clamped into
    ``[lo, hi]``, read in Python (``np.asarray`` would take bools as ints,
    and ints past int64 as floats; torch.compile traces no object arrays):
    its shape first (`_nest_shape`), then each level once, each of its
    sequences held to that shape. Plain ints cost a few passes at C speed."""
    shape = _nest_shape(k, batch)
    flat: list[Any] = [k]
    for n in shape:
        rows = [_entries(v, k) for v in flat]
        if not all(len(r) == n for r in rows):  # entries that are lists
            msg = f"k must be a rectangular sequence of integers; got {show(k)}"
            raise TypeError(msg)
        flat = [v for row in rows for v in row]
    if not set(map(type, flat)) <= {int}:
        entries = []
        for v in flat:
            entry = index_or_none(v)
            if entry is None:  # at the first: later entries' __index__ never runs
                msg = f"k must hold integers only; got {show(k)}"
                raise TypeError(msg)
            entries.append(entry)
        flat = entries
    # Entries past int32 (and the bounds) are clamped as Python ints before
    # any array holds them: NumPy holds none past int64, and inductor wraps
    # torch.compile's traced ints past int32 (2**32 - 1 became -1).
    wide = max(-lo, hi, 2**31 - 1)
    if flat and not (min(flat) >= -wide and max(flat) <= wide):
        flat = [min(max(v, lo), hi) for v in flat]
    # (np.clip: torch.compile, which traces NumPy here, reads no dtype.kind.)
    clamped: np.ndarray[Any, Any] = np.clip(np.array(flat, dtype=np.int64), lo, hi)
    return clamped.reshape(shape)


def _nest_shape(k: Sequence[Any], batch: tuple[int, ...]) -> list[int]:
    """The shape of a nested ``k``, read down its first entries (as NumPy
    reads it), refusing a nest too deep, or of more offsets than the batch
    has matrices or memory holds, before any list shared at every level (or
    holding itself) is expanded."""
    shape: list[int] = []
    first: Any = k
    while _is_level(first) and len(shape) <= MAX_BATCH_DIMS:
        entries = _entries(first, k)
        shape.append(len(entries))
        if not entries:
            break
        first = entries[0]
    if len(shape) > MAX_BATCH_DIMS:  # (NumPy or a repr would overflow the stack)
        rank = len(batch)
        msg = (
            f"k is nested more than {MAX_BATCH_DIMS} levels deep; one offset per "
            f"matrix broadcasts to batch_shape {batch} with at most {rank} "
            f"level{'' if rank == 1 else 's'} of nesting"
        )
        raise ValueError(msg)
    count = math.prod(shape)
    if count > _CHEAP_TO_WALK:  # (smaller: the walk says what is wrong, in order)
        total = math.prod(batch)
        if type(total) is int and count > max(total, 1):
            msg = (
                f"k of shape {tuple(shape)} has more offsets than batch_shape "
                f"{batch} has matrices: it cannot broadcast to it"
            )
            raise ValueError(msg)
        if count * 8 > physical_memory():
            msg = f"k of shape {tuple(shape)} has more offsets than memory holds"
            raise MemoryError(msg)
    return shape


def _is_sequence(v: Any) -> bool:
    """A Python sequence (a list, a tuple, a range, a deque, an
    ``array.array``...; text is no sequence of offsets)."""
    return isinstance(v, Sequence) and not isinstance(v, (str, bytes, bytearray))


def _is_level(v: Any) -> bool:
    """A sequence of offsets within ``k``: a Python sequence or an array of
    rank >= 1 (of any library)."""
    if type(v) is int:  # the common entry (and torch.compile's sizes)
        return False
    return _is_sequence(v) or bool(getattr(v, "ndim", 0))


def _entries(v: Any, k: Any) -> Sequence[Any]:
    """The entries of one sequence of ``k`` (an array's as Python values);
    refused where ``v`` is none (an integer beside sequences) or holds no
    values yet (a tracer of JAX's jit)."""
    if isinstance(v, (list, tuple)):
        return v
    if _is_sequence(v) and not hasattr(v, "tolist"):
        return list(v)
    if _is_level(v):
        try:
            if hasattr(v, "tolist"):
                entries: list[Any] = v.tolist()
                return entries
            return [v[i, ...] for i in range(v.shape[0])]
        except TypeError:
            pass
    msg = f"k must hold integers only; got {show(k)}"
    raise TypeError(msg)
