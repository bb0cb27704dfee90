"""Any other Array API namespace, used through what it has: the contract's
defaults, and the reference build, written without in-place writes so that
it runs on any namespace (array-api-strict's backend is this one, with its
own rules).

What a namespace needs (the README lists it): ``eye``, ``zeros``,
``broadcast_to`` and ``asarray`` for one offset; for one offset per matrix,
``arange``, ``astype`` and ``==`` (the mask ``col - row == k``), or, given
``k`` as host values, ``stack`` and ``reshape`` (the eyes of its distinct
offsets, stacked: a sparse namespace has no ``arange``); item assignment
(``out[...] = ...``) for ``out=``. Each is decided by its presence before
anything is built; what is missing is named in a ``TypeError``, and a
function that is there but fails on the standard's call is named in a
``RuntimeError`` chained to its own. Optional keywords (``device=``) are
passed only where the caller gave them.

Memory is judged by what the result will hold, told from a one-element
probe of the namespace: a dense array on the host (its DLPack device is
the CPU) by its size; a sparse one (it counts its stored entries, ``nnz``)
by its ones; any other, lazy or on a device, not at all.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from .._validate.dtypes import EXTRA_NAMES, STANDARD_NAMES
from ._base import Backend, Build, namespace_info

__all__ = ["GenericBackend", "array_api_eye", "check_index_fits", "on"]

# DLPack's device type of host memory (kDLCPU).
_DLPACK_CPU = 1
# Bytes a sparse format stores per entry beside its value: one int64
# coordinate per dimension (COO's; CSR/GCXS store fewer).
_INDEX_BYTES = 8


class GenericBackend(Backend):
    """A namespace eyelike has no module for, named after it."""

    _host_memory: ClassVar[bool | None] = None  # told from a probe (`_on_host`)

    def __init__(self, xp: ModuleType | None = None) -> None:
        super().__init__(xp)
        if xp is not None:
            self.name = str(getattr(xp, "__name__", "array_api"))
        self._storage: dict[Any, str] = {}

    def device_of(self, x: Any) -> Any:
        # (mlx's arrays have no device attribute: the namespace's default.)
        return getattr(x, "device", None)

    def shape_of(self, x: Any, name: str) -> tuple[int, ...]:
        # A lazy namespace may not know a size yet (None, as the standard
        # allows): a batch size its engine will know, or a k's. The matrix's
        # must be known, to build its rows and columns.
        shape = tuple(x.shape)
        if None not in shape or (
            name == "x" and len(shape) >= 2 and None in shape[-2:]
        ):
            return super().shape_of(x, name)
        return shape

    def eye(self, build: Build) -> Any:
        if build.like is not None and None in build.shape:
            return unknown_batch(self._xp, build)
        return array_api_eye(
            self._xp, build.shape, build.k, build.dtype, build.device, build.out
        )

    def _own_k(self, k: Any) -> Any:
        # Without arange no mask can be built from a k array of the
        # namespace: its values, read on the host, build each offset's eye
        # (pydata sparse's k). A lazy one has none to read: refused at the
        # build, naming what is missing.
        if hasattr(self._xp, "arange") or isinstance(k, (int, np.ndarray)):
            return k
        if hasattr(k, "shape") and self._kind(None) != "other":
            return self.to_numpy(k)
        return k

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        # The standard's exchange first (dense arrays on the host); else the
        # names sparse and lazy libraries give theirs (pydata sparse's
        # todense, ndonnx's unwrap_numpy), or NumPy's own conversion.
        try:
            return np.from_dlpack(x)
        except (AttributeError, BufferError, RuntimeError, TypeError, ValueError):
            pass
        for name in ("todense", "unwrap_numpy"):
            method = getattr(x, name, None)
            if callable(method):
                return np.asarray(method())
        return np.asarray(x)

    def _dtype_table(self, device: Any) -> dict[str, Any]:
        # The inspection API's, and on the default device (or any, where no
        # inspection API tells devices apart) any dtype object the namespace
        # has by a standard or extra name that it calls numeric (ndonnx has
        # float16 and does not list it).
        info = namespace_info(self._xp)
        table = {} if info is None else super()._dtype_table(device)
        if device is None or info is None:
            xp = self._xp
            for name in STANDARD_NAMES + EXTRA_NAMES:
                dt = getattr(xp, name, None)
                if name not in table and dt is not None and _numeric(xp, dt):
                    table[name] = dt
        return table

    def _on_host(self, device: Any) -> bool:
        return self._kind(device) in ("dense", "sparse")

    def _held_bytes(self, of: Any, shape: tuple[int, ...], nbytes: int) -> int:
        device = None if of is None else self.device_of(of)
        if self._kind(device) != "sparse":
            return nbytes
        # At most one stored entry per one: min(R, C) in each matrix.
        itemsize = nbytes // math.prod(shape)
        ones = math.prod(shape[:-2]) * min(shape[-2:])
        return ones * (itemsize + _INDEX_BYTES * len(shape))

    def _kind(self, device: Any) -> str:
        """ "dense" (host memory), "sparse", or "other" (lazy, a device's):
        the namespace's arrays on ``device``, from a one-element probe."""
        found = self._storage.get(device)
        if found is None:
            probe = self._xp.zeros((1,), **on(device))
            found = "other"
            if hasattr(probe, "nnz"):
                found = "sparse"
            else:
                try:
                    if probe.__dlpack_device__()[0] == _DLPACK_CPU:
                        found = "dense"
                except Exception:  # no DLPack, or no values yet (lazy)
                    found = "other"
            self._storage[device] = found
        return found


def unknown_batch(xp: Any, build: Build) -> Any:
    """The eye like ``build.like``, a lazy array whose batch sizes are not
    known yet: its own ``zeros_like``, plus one matrix's eye (or the mask of
    each offset ``k``), broadcast over it by the namespace's engine."""
    needs(xp, build.k, build.out)
    named = _Named(xp)
    n_rows, n_cols = build.shape[-2:]
    if isinstance(build.k, int):
        part = named.eye(n_rows, n_cols, k=build.k, dtype=build.dtype)
    else:
        rows = named.arange(n_rows, dtype=named.int64)
        cols = named.arange(n_cols, dtype=named.int64)
        k = named.asarray(build.k, dtype=named.int64)[..., None, None]
        part = named.astype((cols[None, :] - rows[:, None]) == k, build.dtype)
    return named.zeros_like(build.like, dtype=build.dtype) + part


def _numeric(xp: Any, dtype: Any) -> bool:
    """Whether the namespace's ``isdtype`` calls ``dtype`` bool or numeric."""
    try:
        return bool(xp.isdtype(dtype, ("bool", "numeric")))
    except (TypeError, ValueError, AttributeError):
        return False


def on(device: Any) -> dict[str, Any]:
    """``device=`` for a namespace call, only where one was asked for."""
    return {} if device is None else {"device": device}


def check_index_fits(n_rows: int, n_cols: int, index: Any, limit: int) -> None:
    """Refuse a matrix whose rows or columns the index dtype cannot count
    (an arange or iota would wrap: JAX without x64)."""
    if max(n_rows, n_cols) > limit:
        name = "n_rows" if n_rows > limit else "n_cols"
        msg = (
            f"{name}={max(n_rows, n_cols)} exceeds this namespace's index type "
            f"({index}, at most {limit})"
        )
        raise ValueError(msg)


class _Named:
    """A namespace whose functions, failing, say which one failed: the error
    names the namespace and the function (its own chained)."""

    def __init__(self, xp: Any) -> None:
        self._xp = xp

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._xp, name, None)
        if found is None:
            msg = f"{self._xp.__name__} has no {name}, which eyelike needs here"
            raise TypeError(msg)
        if not callable(found) or isinstance(found, type):
            return found
        module = self._xp.__name__

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return found(*args, **kwargs)
            except MemoryError:
                raise
            except Exception as exc:
                msg = (
                    f"{module}.{name} failed on a call the Array API standard "
                    f"defines ({type(exc).__name__}: {exc})"
                )
                raise RuntimeError(msg) from exc

        return call


def needs(xp: Any, k: Any, out: Any) -> None:
    """Refuse, before anything is built, a call that needs what ``xp`` lacks:
    a per-matrix ``k`` with neither ``arange`` nor (for host values) ``stack``
    and ``reshape``; an ``out`` with no item assignment."""
    if out is not None and not hasattr(type(out), "__setitem__"):
        msg = (
            f"out: {xp.__name__} arrays have no item assignment, so out "
            f"cannot be filled in place; take the result instead"
        )
        raise TypeError(msg)
    if isinstance(k, int) or hasattr(xp, "arange"):
        return
    if not isinstance(k, np.ndarray):
        msg = (
            f"k: {xp.__name__} has no arange to build a mask from k, a "
            f"{xp.__name__} array; give k as a Python sequence or NumPy array"
        )
        raise TypeError(msg)
    lacking = [f for f in ("stack", "reshape") if not hasattr(xp, f)]
    if lacking:
        msg = (
            f"k: one offset per matrix needs {xp.__name__}.arange, or "
            f"{' and '.join(lacking)}, which it lacks; give one int k"
        )
        raise TypeError(msg)


def array_api_eye(
    xp: Any,
    shape: tuple[int, ...],
    k: Any,
    dtype: Any,
    device: Any,
    out: Any | None,
) -> Any:
    """The reference implementation, on any Array API namespace ``xp``.

    Written without in-place writes, so it runs on any namespace: one
    offset takes the namespace's own ``eye``, copied over the batch; one
    offset per matrix the mask ``col - row == k``, built once per matrix
    shape and broadcast over the batch, then cast to the requested dtype
    (or, without ``arange``, the eyes of ``k``'s distinct offsets, stacked
    per matrix). ``k`` is a Python int or an integer array (of ``xp``, or NumPy's
    host values), already clamped into ``[-n_rows, n_cols]`` so it fits the
    namespace's index dtype.
    """
    needs(xp, k, out)
    result = _build(xp, _Named(xp), shape, k, dtype, on(device))
    if out is None:
        return result
    try:
        out[...] = result
    except MemoryError:
        raise
    except Exception as exc:
        msg = f"{xp.__name__}: out[...] = eye failed ({type(exc).__name__}: {exc})"
        raise RuntimeError(msg) from exc
    return out


def _build(
    raw: Any,
    xp: Any,
    shape: tuple[int, ...],
    k: Any,
    dtype: Any,
    where: dict[str, Any],
) -> Any:
    """A fresh eye of ``shape`` (see `array_api_eye`), by the functions of
    ``xp`` (``raw``, each failure named)."""
    if math.prod(shape) == 0:  # nothing to write: no (R, C) scratch either
        return xp.zeros(shape, dtype=dtype, **where)
    n_rows, n_cols = shape[-2:]
    if isinstance(k, int):
        # The standard's own eye for one matrix, copied over the batch: the
        # namespace's idiom, and the fewest calls (each costs on a wrapper).
        matrix = xp.eye(n_rows, n_cols, k=k, dtype=dtype, **where)
        if len(shape) == 2:
            return matrix
        return xp.asarray(xp.broadcast_to(matrix, shape), copy=True)
    if not hasattr(raw, "arange"):
        # The eye of each distinct offset, gathered by index: no dense
        # scratch where the namespace is sparse.
        values, index = np.unique(
            np.broadcast_to(k, shape[:-2]).reshape(-1), return_inverse=True
        )
        eyes = [xp.eye(n_rows, n_cols, k=int(v), dtype=dtype, **where) for v in values]
        # (Stacked by reference, a matrix each: sparse's take refuses its own
        # index arrays.)
        return xp.reshape(xp.stack([eyes[i] for i in index]), shape)
    info = namespace_info(raw)
    index_dtype = (
        raw.int64 if info is None else info.default_dtypes(**where)["indexing"]
    )
    check_index_fits(n_rows, n_cols, index_dtype, xp.iinfo(index_dtype).max)
    rows = xp.arange(n_rows, dtype=index_dtype, **where)
    cols = xp.arange(n_cols, dtype=index_dtype, **where)
    diff = cols[None, :] - rows[:, None]
    mask = diff == xp.asarray(k, dtype=index_dtype, **where)[..., None, None]
    # A fresh, writeable array, never a broadcast view: the standard's
    # astype copies unless told copy=False (unsaid: mlx's has no copy=).
    return xp.astype(xp.broadcast_to(mask, shape), dtype)
