"""The NumPy backend: the library's rules, and the eye made in host memory.

A fresh output comes from ``np.zeros`` (calloc: fresh pages arrive zeroed),
so only the diagonal is left to write, through one strided view (no Python
loop over matrices). An ``out`` is zeroed first, by the C library's
``memset`` (through ctypes, which releases the GIL): its fast string stores
stream past the caches, where NumPy's ``fill`` is a plain store loop for
every type wider than a byte. (Every dtype eyelike accepts has zero as
all-zero bytes; float8_e8m0fnu has not, and is refused up front.) One
offset per matrix: `numpy_per_matrix`. A template of finished matrices
copied over an ``out`` went: faster than NumPy's own idiom on some
machines, slower on others.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, Literal

import numpy as np

from .._validate.dtypes import numpy_dtype
from .._validate.gate import admit, admit_offsets
from .._validate.offsets import clamp_array
from . import numpy_per_matrix as _per_matrix
from ._base import Backend, Build, Shape, host_device
from .numpy_per_matrix import MASK_ELEMENTS

__all__ = ["NumPyBackend", "eye"]

# Below this a memset call (about 1 us through ctypes) costs more than it saves.
_MEMSET_BYTES = 1 << 16
_NDARRAY = np.ndarray


class NumPyBackend(Backend):
    """NumPy: host memory, NumPy (and ml_dtypes) dtypes, strided outs."""

    name = "numpy"
    namespaces = ("numpy", "array_api_compat.numpy")
    takes = frozenset({"out", "order"})
    _numpy_dtypes = True
    _host_memory = True
    _scratch = 0  # per-matrix k: written in place, by blocks of indices or rows
    _short_out = True

    def device(self, device: Any) -> Any:
        return host_device(device, "NumPy")

    def device_of(self, x: Any) -> Any:
        return "cpu"

    def _out_strides(self, out: Any) -> tuple[int, ...] | None:
        if not out.flags.writeable:
            msg = "out is read-only"
            raise ValueError(msg)
        if out.flags.c_contiguous:
            return None  # no two elements alias: nothing to sort
        return tuple(s // out.itemsize for s in out.strides)

    def _short_shape(self, x: Any) -> Shape | None:
        # A subclass keeps its own class: the general path's (`eye`).
        return x.shape if type(x) is _NDARRAY else None

    def short_eye(
        self, shape: Shape, k: Any, dtype: Any, like: Any, device: Any, out: Any
    ) -> Any:
        # np.eye(3) itself costs ~1 us: the gate settles the shape and k;
        # the rest is NumPy's own rules, each where the general path cannot
        # refuse, then its build. The dtype is resolved as that path does.
        k = admit(shape, k)
        if k is None:
            return None
        if device is not None and not (type(device) is str and device == "cpu"):
            return None
        if type(k) is not int:
            # One offset per matrix, a fresh result only: a NumPy array of a
            # signed integer type (unsigned ones the general path clamps
            # first) whose shape the gate admits.
            if (
                out is not None
                or type(k) is not _NDARRAY
                or k.dtype.kind != "i"
                or not admit_offsets(shape, k.shape)
            ):
                return None
            dt = numpy_dtype(dtype, "numpy")[0]
            if math.prod(shape) > MASK_ELEMENTS:  # (the mask: any k)
                k = clamp_array(k, -shape[-2], shape[-1])
            whole = _per_matrix.whole(k, shape, dt, None)
            return whole if whole is not None else _fill(shape, k, dt, None, "C")
        if out is None:
            return _ones(np.zeros(shape, numpy_dtype(dtype, "numpy")[0]), shape, k)
        # An ``out`` no check of the general path refuses: an ndarray itself
        # (no subclass), writeable and C-contiguous (no two elements alias),
        # of the shape asked for and the dtype the one asked for resolves to.
        if type(out) is not _NDARRAY or shape != out.shape:
            return None
        flags = out.flags
        if not (flags.writeable and flags.c_contiguous):
            return None
        if numpy_dtype(out.dtype if dtype is None else dtype, "numpy")[0] != out.dtype:
            return None
        return _ones(_zero(out), shape, k)

    def eye(self, build: Build) -> Any:
        like = build.like
        if build.out is None and like is not None and type(like) is not _NDARRAY:
            # A subclass of x's (MaskedArray, memmap, matrix, the caller's
            # own), as np.zeros_like gives it, holding the eye.
            result = np.zeros_like(like, dtype=build.dtype)
            result[...] = eye(build)
            return result
        return eye(build)


def eye(build: Build) -> np.ndarray[Any, Any]:
    """Fill ``build.out`` (or a new array of memory ``build.order``) with the
    batched eye: `NumPyBackend.eye`, and each chunk of a Dask array."""
    shape, k, dtype, out = build.shape, build.k, build.dtype, build.out
    if type(k) is not int and (
        build.order == "C" if out is None else out.flags.c_contiguous
    ):
        whole: np.ndarray[Any, Any] | None = _per_matrix.whole(k, shape, dtype, out)
        if whole is not None:
            return whole
    return _fill(shape, k, dtype, out, build.order)


def _fill(
    shape: Shape, k: Any, dtype: Any, out: Any, order: Literal["C", "F"]
) -> np.ndarray[Any, Any]:
    """Zeros (or ``out``, zeroed), then the ones of ``k``: `eye` where
    `numpy_per_matrix.whole` does not write the output whole."""
    a = np.zeros(shape, dtype, order) if out is None else _zero(out)
    if type(k) is not int:
        if a.size:
            _per_matrix.fill(a, k)
    elif a.flags.c_contiguous:
        _ones(a, shape, k)
    else:
        _strided_diagonal(a, k)
    return a


def _ones(a: np.ndarray[Any, Any], shape: Shape, k: int) -> np.ndarray[Any, Any]:
    """``a`` (zeroed, C-contiguous, of ``shape``) with ones on diagonal ``k``
    of every matrix: one strided view of the flat matrices, whose stride
    ``n_cols + 1`` steps one row down and one column right, filled
    (``fill``, not an assignment: no scalar array to make and cast)."""
    one = len(shape) == 2  # (one matrix: a dimension fewer to index)
    if one:
        n_rows, n_cols = shape
    else:
        n_rows, n_cols = shape[-2], shape[-1]
    start = k if k >= 0 else -k * n_cols
    # The start of the row after the diagonal's last: the view's next step
    # lands past it (in a column >= 1), so the view ends there. No diagonal
    # (k beyond the matrix, or an empty one) leaves it at or before start.
    rows = n_cols - k  # (min(n_rows, n_cols - k), by a comparison: no call)
    stop = (rows if rows < n_rows else n_rows) * n_cols
    if start < stop:  # (ravel and [..., diagonal]: the cheapest view, ~0.05 us)
        if one:
            a.ravel()[start : stop : n_cols + 1].fill(1)
        else:
            a.reshape(-1, n_rows * n_cols)[..., start : stop : n_cols + 1].fill(1)
    return a


def _strided_diagonal(a: np.ndarray[Any, Any], k: int) -> None:
    """Ones on diagonal ``k`` of every matrix of a zeroed ``a`` of any strides
    (an ``out``, order "F"): einsum's writeable view of it, of any dtype
    (as_strided's cannot describe ml_dtypes' types, and costs more)."""
    n_rows, n_cols = a.shape[-2:]
    r0, c0 = (0, k) if k >= 0 else (-k, 0)
    n = min(n_rows - r0, n_cols - c0)  # (k lies in [-R, C]: never negative)
    np.einsum("...ii->...i", a[..., r0 : r0 + n, c0 : c0 + n])[...] = 1


def _zero(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``a``, every element set to zero (``memset`` where contiguous)."""
    # (A one-byte type's fill is NumPy's own call of memset: no ctypes.)
    if a.itemsize > 1 and a.nbytes >= _MEMSET_BYTES and a.flags.c_contiguous:
        ctypes.memset(a.ctypes.data, 0, a.nbytes)  # (ctypes releases the GIL)
    else:
        a.fill(0)
    return a
