"""The NumPy backend: the library's rules, and the eye made in host memory.

One offset: a fresh output comes from ``np.zeros`` (calloc: fresh pages
arrive zeroed), so only the diagonal is left to write, through one strided
view (no Python loop over matrices). An ``out`` is zeroed first, by the C
library's ``memset`` (through ctypes, which releases the GIL): its fast
string stores stream past the caches, where NumPy's ``fill`` is a plain
store loop for every type wider than a byte. (Every dtype eyelike accepts
has zero as all-zero bytes; float8_e8m0fnu has not, and is refused up
front.) A template of finished matrices copied over an ``out`` went: faster
than NumPy's own idiom on some machines, slower on others.

One offset per matrix (`_per_matrix`), each way where it costs least on any
machine: a small output is NumPy's own idiom, the mask ``(c - r) == k``
cast; matrices at most 32 bytes wide (where the table is no larger than the
output) are each copied from a table of the matrix of every diagonal; any
other is zeros, then the ones written at computed indices (`_ones_at`).
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, Literal

import numpy as np

from .._validate.dtypes import numpy_dtype
from .._validate.gate import admit, admit_offsets
from .._validate.offsets import clamp_array, numpy_clip
from ._base import Backend, Build, Shape, host_device

__all__ = ["NumPyBackend", "eye"]

# Below this a memset call (about 1 us through ctypes) costs more than it saves.
_MEMSET_BYTES = 1 << 16
# Outputs up to this many elements are NumPy's mask, in fewer calls than
# the others (measured side by side on 2 cores, float32, against the mask:
# the rows' indices 16x16x16 1.13x, 8x32x32 0.80x, 32x32x32 0.51x,
# 4096x64x64 0.64x; the table 256x3x3 1.2x).
_MASK_ELEMENTS = 1 << 12
# At most this many rows (`_ones_at`) or matrices (the table) are indexed at
# a time (a few int64 index arrays of this length: about 16 MiB at most).
_INDEX_BLOCK = 1 << 18
_NDARRAY = np.ndarray


class NumPyBackend(Backend):
    """NumPy: host memory, NumPy (and ml_dtypes) dtypes, strided outs."""

    name = "numpy"
    namespaces = ("numpy", "array_api_compat.numpy")
    takes = frozenset({"out", "order"})
    _numpy_dtypes = True
    _host_memory = True
    _scratch = False  # per-matrix k: written in place, by blocks of indices or rows
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
            if math.prod(shape) > _MASK_ELEMENTS:  # (the mask: any k)
                k = clamp_array(np, k, shape[-2], shape[-1], np.int64, numpy_clip)
            return _per_matrix(shape, k, numpy_dtype(dtype, "numpy")[0], None, "C")
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
    shape, k, out = build.shape, build.k, build.out
    if type(k) is not int:
        return _per_matrix(shape, k, build.dtype, out, build.order)
    a = np.zeros(shape, build.dtype, build.order) if out is None else _zero(out)
    if a.flags.c_contiguous:
        return _ones(a, shape, k)
    # Other strides (an ``out``, order "F"): einsum's writeable view of the
    # diagonal, of any dtype (as_strided's cannot describe ml_dtypes' types,
    # and costs more).
    n_rows, n_cols = shape[-2:]
    r0, c0 = (0, k) if k >= 0 else (-k, 0)
    n = min(n_rows - r0, n_cols - c0)  # (k lies in [-R, C]: never negative)
    np.einsum("...ii->...i", a[..., r0 : r0 + n, c0 : c0 + n])[...] = 1
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


def _zero(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``a``, every element set to zero (``memset`` where contiguous)."""
    # (A one-byte type's fill is NumPy's own call of memset: no ctypes.)
    if a.itemsize > 1 and a.nbytes >= _MEMSET_BYTES and a.flags.c_contiguous:
        ctypes.memset(a.ctypes.data, 0, a.nbytes)  # (ctypes releases the GIL)
    else:
        a.fill(0)
    return a


def _per_matrix(
    shape: Shape, k: Any, dtype: Any, out: Any, order: Literal["C", "F"]
) -> np.ndarray[Any, Any]:
    """The eye of diagonal ``k[b]`` in each matrix ``b`` (``k``: a NumPy
    integer array, clamped into ``[-R, C]`` where the output is larger than
    `_MASK_ELEMENTS`), in ``out`` or a fresh array of memory ``order``."""
    elements = math.prod(shape)
    n_rows, n_cols = shape[-2], shape[-1]
    if 0 < elements <= _MASK_ELEMENTS:
        hit = _mask(n_rows, n_cols, k)
        if out is None and hit.shape == shape:  # k holds every matrix's
            return hit.astype(dtype, order=order, copy=False)
        a = np.empty(shape, dtype, order) if out is None else out
        np.copyto(a, hit, casting="unsafe")  # (broadcast over the batch)
        return a
    if (
        elements
        and (order == "C" if out is None else out.flags.c_contiguous)
        and max(n_rows, n_cols) * dtype.itemsize <= 32
        and (n_rows + n_cols + 1) * n_rows * n_cols <= elements
    ):
        # Each matrix copied from the table's row k + R, by blocks: where
        # taken it wins on every machine (`_ones_at` holds 40 bytes of
        # scratch per one in about twenty calls; this writes the output once,
        # in six). mode="clip": no bounds check (k is within them).
        table = _mask(n_rows, n_cols, np.arange(-n_rows, n_cols + 1)).astype(dtype)
        a = np.empty(shape, dtype) if out is None else out
        offsets, matrices = _flat(k, shape[:-2]), a.reshape(-1, n_rows, n_cols)
        for first in range(0, offsets.size, _INDEX_BLOCK):
            block = slice(first, first + _INDEX_BLOCK)
            rows = offsets[block] + n_rows
            np.take(table, rows, axis=0, out=matrices[block], mode="clip")
        return a
    a = np.zeros(shape, dtype, order) if out is None else _zero(out)
    if elements:  # (else no arange of a dimension up to 2**63)
        _ones_at(a, k)
    return a


def _mask(n_rows: int, n_cols: int, k: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The rule ``(c - r) == k`` (``reference.mask``'s), by array methods and
    operators: NumPy's functions are Python wrappers, each a call more."""
    cols = np.arange(n_cols)
    rows = cols if n_rows == n_cols else np.arange(n_rows)
    hit: np.ndarray[Any, Any] = (cols - rows[:, None]) == k[..., None, None]
    return hit


def _flat(k: np.ndarray[Any, Any], batch: Shape) -> np.ndarray[Any, Any]:
    """Each matrix's offset, in order: a view where ``k`` holds every
    matrix's (np.broadcast_to is a Python wrapper: skipped then)."""
    return (k if k.shape == batch else np.broadcast_to(k, batch)).reshape(-1)


def _ones_at(a: np.ndarray[Any, Any], k: np.ndarray[Any, Any]) -> None:
    """Write diagonal ``k[b]`` of matrix ``b`` of a zeroed ``a``, for every
    ``b`` at once, by blocks of at most ``_INDEX_BLOCK`` rows (the scratch
    stays small whatever the batch): no pass per distinct offset. Row
    ``r``'s one is in column ``r + k``, where that is inside the row:
    written at its flat position where ``a`` is C-contiguous (about eight
    calls a block), else at its (matrix, row, column)."""
    n_rows, n_cols = a.shape[-2:]
    batch = a.shape[:-2]
    offsets = _flat(k, batch)
    flat = a.reshape(-1) if a.flags.c_contiguous else None
    steps = np.arange(n_rows)
    per_block = max(1, _INDEX_BLOCK // n_rows)
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
