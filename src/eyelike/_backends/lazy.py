"""The lazy libraries' one adapter (Dask's and cubed's): one reader of
``chunks=`` (`read`; every refusal a ValueError naming ``chunks``), a
per-matrix ``k`` chunked as the output's batch (`lazy_k`), and the fill of
one block by the eager NumPy or CuPy build (`block`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from .._validate.integers import is_bool_like
from .._validate.offsets import along_batch, shifted
from .._validate.text import show
from . import cupy as _cupy
from . import numpy as _numpy
from ._base import Build

__all__ = ["Chunks", "block", "lazy_k", "on_host", "read", "refusal"]

Chunks = tuple[tuple[int, ...], ...]
Bad = Callable[[str], ValueError]

# A chunks spec nests at most a dict of sequences of sizes: three levels.
_MAX_DEPTH = 3


def refusal(chunks: Any, where: str, why: str) -> ValueError:
    """The error for the caller's ``chunks``, not a chunking ``where``."""
    return ValueError(f"chunks={show(chunks, 120)} is not a chunking {where}: {why}")


def _check_values(chunks: Any, bad: Bad) -> None:
    """Refuse a spec nested deeper than any (or holding itself: it would
    overflow the stack here or in the library), a bool, or a size below -1
    (which Dask's normaliser lets through, to fail at compute, in a task)."""
    leaves, level = [], [chunks]
    for _ in range(_MAX_DEPTH + 1):
        inner: dict[int, Any] = {}  # (by id: each value once, without recursion)
        for item in level:
            if isinstance(item, (dict, tuple, list)):
                values = item.values() if isinstance(item, dict) else item
                inner.update((id(v), v) for v in values)
            else:
                leaves.append(item)
        level = list(inner.values())
    if level:
        msg = f"it nests more than {_MAX_DEPTH} levels deep"
        raise bad(msg)
    if any(is_bool_like(v) for v in leaves):
        msg = "a bool is not a chunk size"
        raise bad(msg)
    if any(isinstance(v, (int, np.integer)) and v < -1 for v in leaves):
        msg = "a chunk size is a positive int, or -1 for the whole dimension"
        raise bad(msg)


def read(
    normalize: Any,
    chunks: Any,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    matrix: tuple[Any, ...],
    bad: Bad,
    *,
    batch_only: bool,
    limit: int | None = None,
) -> Chunks:
    """``chunks`` (not None; any form ``dask.array`` and ``cubed`` take) as
    the library's ``normalize`` makes it, ints, each dimension's summing to it.

    ``matrix``: the matrix dimensions' entries where ``chunks`` gives the
    batch's only; ``batch_only``: a dict names batch dimensions only, the
    others whole (Dask), else any, the others "auto" (cubed); ``limit``:
    the bytes of an "auto" chunk, unless ``chunks`` is a size ("64MiB").
    """
    _check_values(chunks, bad)
    nb, size = len(shape) - 2, None
    if isinstance(chunks, str) and chunks != "auto":
        size, chunks = chunks, "auto"
    if isinstance(chunks, dict):
        named = nb if batch_only else len(shape)
        spec: list[Any] = [None if batch_only else "auto"] * nb + list(matrix)
        for axis, value in chunks.items():
            try:
                i = operator.index(axis)
            except TypeError:  # (a float tensor has an __index__ that refuses)
                i = named  # refused below
            if isinstance(axis, (bool, np.bool_)) or not -named <= i < named:
                which = f"the {nb} batch" if batch_only else f"its {named}"
                msg = f"axis {show(axis)} is not one of {which} dimensions"
                raise bad(msg)
            spec[i % named] = value
        full = tuple(spec)
    elif isinstance(chunks, (tuple, list)):
        if len(chunks) == nb:
            full = (*chunks, *matrix)
        elif len(chunks) == nb + 2:
            full = tuple(chunks)
        else:
            why = (
                f"expected {nb} entries (one per batch dimension) or {nb + 2} "
                f"(one per dimension), got {len(chunks)}"
            )
            raise bad(why)
    else:  # one value (an int, -1, "auto") for every batch dimension
        full = (*(chunks,) * nb, *matrix)
    if math.prod(shape) == 0:  # ("auto" divides by the chunk's size)
        full = tuple(-1 if isinstance(v, str) and v == "auto" else v for v in full)
    try:
        normal = normalize(full, shape, limit=size or limit, dtype=dtype)
    except MemoryError:  # (the library's list of the chunks: too long to hold)
        msg = "it makes more chunks than memory can list"
        raise bad(msg) from None
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise bad(str(exc) or type(exc).__name__) from exc
    for dim, n in zip(normal, shape, strict=True):
        if any(c < 0 for c in dim) or sum(dim) != n:  # (normalisers let some by)
            why = (
                "a chunk size is a positive int, or -1 for the whole dimension; "
                f"this one gives chunks {show(tuple(dim), 60)} along a dimension "
                f"of {n}"
            )
            raise bad(why)
    return tuple(tuple(int(c) for c in dim) for dim in normal)


def lazy_k(k: Any, batch: tuple[int, ...], bc: Chunks, from_array: Any) -> Any:
    """A per-matrix ``k`` chunked to line up with the output's batch chunks
    ``bc`` (one block along a dimension where it broadcasts): the library's
    array rechunked, or host values made one by ``from_array``."""
    kc = along_batch(k.shape, batch, bc, lambda n: (n,))
    if isinstance(k, np.ndarray):
        return from_array(k, chunks=kc)
    return k if k.chunks == kc else k.rechunk(kc)


def on_host(x: Any, dtype: Any = None) -> np.ndarray[Any, Any]:
    """``x``'s values in a NumPy array (a CuPy one's copied back)."""
    get = getattr(x, "get", None)
    return np.asarray(get() if callable(get) else x, dtype=dtype)


def block(
    shape: tuple[int, ...],
    k: Any,
    *,
    out_dtype: np.dtype[Any],
    gpu: bool = False,
    order: Literal["C", "F"] = "C",
    shift: int = 0,
) -> Any:
    """One block of ``shape`` of a lazy eye, made when computed by the eager
    NumPy (or, ``gpu``, CuPy) fill: ``k`` an int or the block's slice of a
    per-matrix ``k`` (a CuPy one copied back for NumPy), ``shift`` the
    ``r0 - c0`` of its first element (0 for whole matrices), by which it
    holds diagonals of its own (`shifted`)."""
    if not (gpu or isinstance(k, int)):
        k = on_host(k, np.int64)
    k = shifted(k, shift, *shape[-2:])
    fill = _cupy.eye if gpu else _numpy.eye
    return fill(Build(shape, k, out_dtype, order=order))
