"""The NumPy backend: the library's rules, and the eye made in host memory.

A fresh output comes from ``np.zeros`` (calloc: fresh pages arrive zeroed
from the OS, recycled memory is zeroed by calloc itself), so only the
diagonal is left to write, through one strided view (no Python loop over
matrices).

An ``out`` must be zeroed first. NumPy's ``fill`` is a plain store loop for
every type wider than a byte (a one-byte type's is ``memset`` itself),
while the C library's ``memset`` (through ctypes, which releases the GIL)
uses the CPU's fast string stores and streams past the caches. Every dtype
eyelike accepts has zero as all-zero bytes (the one that does not,
float8_e8m0fnu, is refused up front).

One offset per matrix: NumPy's own mask for a small output, else the
ones written at computed indices, or each matrix copied from a table of the
matrix of every diagonal (`numpy_per_matrix`).

Nothing else: a template of finished matrices copied over a contiguous
``out`` for one offset was faster on some machines and slower than NumPy's
own idiom on others, so it went.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._validate.dtypes import is_ml_dtype, numpy_dtype
from .._validate.gate import admit
from . import numpy_per_matrix as _per_matrix
from ._base import Backend, Build, Shape, host_device

__all__ = ["NumPyBackend", "eye", "eye_2d"]

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
        # NumPy's one check left that can fail is the dtype's, resolved as
        # the general path resolves it. Its one device, named, is what None
        # means.
        k = admit(shape, k)
        if k is None:
            return None
        if device is not None and not (type(device) is str and device == "cpu"):
            return None
        if type(k) is not int:  # one offset per matrix: a fresh result only
            return None if out is not None else _per_matrix.short_eye(shape, k, dtype)
        if out is not None:
            return _fill_out(shape, k, dtype, out)
        dt = numpy_dtype(dtype, "numpy")[0]
        if len(shape) == 2:
            return eye_2d(shape, k, dt)
        # (A larger output too: its build in a few calls, not the
        # pipeline's twenty, which an output of megabytes has swept from
        # the caches, where each costs a miss, ~25 us.)
        a = np.zeros(shape, dt)
        _ones_on_diagonal(a, shape[-2], shape[-1], k)
        return a

    def eye(self, build: Build) -> Any:
        like = build.like
        if build.out is None and like is not None and type(like) is not _NDARRAY:
            # A subclass of x's (MaskedArray, memmap, matrix, the caller's
            # own), as np.zeros_like gives it, holding the eye.
            result = np.zeros_like(like, dtype=build.dtype)
            result[...] = eye(build)
            return result
        return eye(build)


def _fill_out(shape: Shape, k: int, dtype: Any, out: Any) -> Any:
    """`NumPyBackend.short_eye` with an ``out``, filled as the general path
    fills it, where no check of that path can refuse it: an ``np.ndarray``
    itself (no subclass), writeable and C-contiguous (no two elements
    alias), of the shape asked for (which the gate admitted) and the dtype
    the one asked for resolves to. Else None."""
    if type(out) is not _NDARRAY or shape != out.shape:
        return None
    flags = out.flags
    if not (flags.writeable and flags.c_contiguous):
        return None
    # The general path's one check left that can fail, and its resolution.
    if numpy_dtype(out.dtype if dtype is None else dtype, "numpy")[0] != out.dtype:
        return None
    _zero(out)
    _ones_on_diagonal(out, shape[-2], shape[-1], k)
    return out


def eye_2d(shape: Shape, k: int, dtype: np.dtype[Any]) -> Any:
    """One fresh matrix of ``shape`` (``n_rows, n_cols``): ``np.eye``'s own
    method, with nothing to check. Its diagonal is `_ones_on_diagonal`'s
    view, with the same bounds, of the one flat matrix (written here: a call
    and a dimension fewer)."""
    a = np.zeros(shape, dtype)
    n_rows, n_cols = shape
    start = k if k >= 0 else -k * n_cols
    rows = n_cols - k  # (min(n_rows, n_cols - k), by a comparison: no call)
    stop = (rows if rows < n_rows else n_rows) * n_cols
    if start < stop:
        a.reshape(-1)[start : stop : n_cols + 1].fill(1)
    return a


def _ones_on_diagonal(
    a: np.ndarray[Any, Any], n_rows: int, n_cols: int, k: int
) -> None:
    """Write ones on diagonal ``k`` of every matrix of a C-contiguous ``a``
    (``n_rows`` by ``n_cols``): one strided view of its flat matrices, whose
    stride ``n_cols + 1`` steps one row down and one column right, filled
    (``fill``, not an assignment: no scalar array to make and cast)."""
    start = k if k >= 0 else -k * n_cols
    # The start of the row after the diagonal's last: the view's next step
    # lands past it (in a column >= 1), so the view ends there. No diagonal
    # (k beyond the matrix, or an empty one) leaves it at or before start.
    rows = n_cols - k  # (min(n_rows, n_cols - k), by a comparison: no call)
    stop = (rows if rows < n_rows else n_rows) * n_cols
    if start < stop:
        a.reshape(-1, n_rows * n_cols)[:, start : stop : n_cols + 1].fill(1)


def _write_diagonal(a: np.ndarray[Any, Any], k: int) -> None:
    """Write ones on diagonal ``k`` of every matrix in ``a`` (any strides)."""
    n_rows, n_cols = a.shape[-2:]
    if a.flags.c_contiguous:
        _ones_on_diagonal(a, n_rows, n_cols, k)
        return
    r0, c0 = (0, k) if k >= 0 else (-k, 0)
    length = min(n_rows - r0, n_cols - c0)
    if length <= 0 or a.size == 0:
        return
    one: Any = 1
    if is_ml_dtype(a.dtype):
        # as_strided cannot describe ml_dtypes' types; write their bits.
        one = np.array(1, dtype=a.dtype).view(f"u{a.dtype.itemsize}")
        a = a.view(one.dtype)
    corner = a[..., r0, c0]
    # Any strides work here, so an ``out`` need not be contiguous.
    as_strided(
        corner,
        shape=(*corner.shape, length),
        strides=(*corner.strides, a.strides[-2] + a.strides[-1]),
    )[...] = one


def _zero(a: np.ndarray[Any, Any]) -> None:
    """Set every element of ``a`` to zero (``memset`` where contiguous)."""
    # (A one-byte type's fill is NumPy's own call of memset: no ctypes.)
    if a.itemsize > 1 and a.nbytes >= _MEMSET_BYTES and a.flags.c_contiguous:
        ctypes.memset(a.ctypes.data, 0, a.nbytes)  # (ctypes releases the GIL)
    else:
        a.fill(0)


def eye(build: Build) -> np.ndarray[Any, Any]:
    """Fill ``build.out`` (or a new array of memory ``build.order``) with the
    batched eye: `NumPyBackend.eye`, and each chunk of a Dask array."""
    k, out = build.k, build.out
    a: np.ndarray[Any, Any]
    if not isinstance(k, int) and (
        build.order == "C" if out is None else out.flags.c_contiguous
    ):
        whole: np.ndarray[Any, Any] | None = _per_matrix.whole(
            k, build.shape, build.dtype, out
        )
        if whole is not None:
            return whole
    if out is None:
        a = np.zeros(build.shape, dtype=build.dtype, order=build.order)
    else:
        a = out
        _zero(a)
    if isinstance(k, int):
        _write_diagonal(a, k)
    elif a.size:
        _per_matrix.fill(a, k)
    return a
