"""Host-side planning of the CuPy kernels' launches (`plan`) and their
typed scalars (`arguments`). Pure Python and NumPy: tested without CuPy."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from .constants import (
    CHUNK_BYTES,
    VECTOR_BYTES,
    scalar_params,
    vector_kind,
    vector_scalars,
)

_INT32_LIMIT = 2**31  # I = int iff the flat index fits in it
WARP = 32  # threads that store a vector launch's chunks together
# Outputs of fewer bytes take the element path, whatever their layout: its
# launch passes 2 or 3 scalars where the vector one passes 9 to 13, and on
# an H200's host that made a 3x3 cost 12.3-14.9 us against 18.3-23.9 us
# (launch and cupy.empty, three runs). Below 256 KiB the element path's
# slower GPU time (a quarter of the memset's speed) costs under 0.3 us more,
# well under the host time it saves.
VECTOR_FROM_BYTES = 2**18

__all__ = [
    "VECTOR_FROM_BYTES",
    "Launch",
    "arguments",
    "check_alignment",
    "offsets_dtype",
    "plan",
]


def check_alignment(address: int, itemsize: int, strides: tuple[int, ...] = ()) -> None:
    """Refuse (ValueError) an output whose first element's ``address``, or
    a stride in bytes of a dimension longer than one, is not a multiple of
    ``itemsize``. Both kernel families store whole elements of ``T``, which
    CuPy aligns to its item size (``complex<T>`` is ``__align__(2 *
    sizeof(T))``); a misaligned store is a device fault that leaves the
    process's CUDA context unusable, and CuPy's own kernels (``fill``,
    ``copyto``) do not check."""
    if address % itemsize:
        aligned = address & -address  # the largest power of two dividing it
        msg = (
            f"out starts at address {address:#x}, aligned to {aligned} "
            f"byte{'s' if aligned > 1 else ''}; its {itemsize}-byte elements need "
            f"{itemsize}-byte alignment on the device (a view into a buffer at an "
            "odd offset?): pass an aligned array, such as a fresh cupy.empty"
        )
        raise ValueError(msg)
    if any(s % itemsize for s in strides):
        msg = (
            f"out has strides {strides} bytes, not all multiples of its "
            f"{itemsize}-byte elements, which need {itemsize}-byte alignment on "
            "the device: pass an aligned array, such as a fresh cupy.empty"
        )
        raise ValueError(msg)


@dataclasses.dataclass(frozen=True)
class Launch:
    """One kernel launch: the kernel (k mode, 64-bit index, path, and the
    vector kernel for per-matrix k over matrices under one chunk), its
    scalars as ``(name, value)`` in parameter order, the vector path's
    thread count (CuPy's ``size=``; 0: element path), and the matrices of
    the flattened batch it fills, ``start:stop``."""

    per_matrix: bool
    wide: bool
    vector: bool
    scalars: tuple[tuple[str, int], ...]
    threads: int
    start: int
    stop: int
    small: bool = False

    @property
    def kind(self) -> str:
        """The vector kernel's kind (`vector_kind`)."""
        return vector_kind(self.per_matrix, self.small)


def offsets_dtype(n_rows: int, n_cols: int) -> type[np.signedinteger[Any]]:
    """The type the kernels read per-matrix offsets in: int32 (every k,
    clamped into [-R, C], fits) but for matrices of 2**31+ elements, which
    take the 64-bit vector kernel. (An element-path launch of 2**31+
    elements reads int64: `fill` converts.)"""
    return np.int64 if n_rows * n_cols >= _INT32_LIMIT else np.int32


def plan(
    shape: tuple[int, ...],
    k: int | None,
    itemsize: int,
    *,
    contiguous: bool,
    address: int,
    vector_from: int = VECTOR_FROM_BYTES,
) -> tuple[Launch, ...]:
    """The launches, in order, that fill each matrix of a non-empty output
    of ``shape`` at ``address`` once, for the clamped scalar offset ``k``
    (None: per matrix). An output under ``vector_from`` bytes (0: none, for
    the vector kernel's tests), or one the vector path cannot store to,
    takes the element path, one launch. The vector path's index arithmetic
    is 32-bit: an output of 2**31+ elements takes a launch per slice of
    whole matrices under 2**31 elements, and only matrices of 2**31+
    elements take the 64-bit vector kernel."""
    check_alignment(address, itemsize)
    return _plan(
        tuple(shape), k, itemsize, contiguous, address % VECTOR_BYTES, vector_from
    )


# Remembered: a call's host time is the GPU's idle time on a small output
# (the plan and its NumPy scalars cost ~9 us on a 2-core CPU), and the plan
# depends on the address only through its place in a 16-byte line.
@functools.lru_cache(maxsize=256)
def _plan(
    shape: tuple[int, ...],
    k: int | None,
    itemsize: int,
    contiguous: bool,
    address: int,
    vector_from: int,
) -> tuple[Launch, ...]:
    n_rows, n_cols = shape[-2:]
    mat_size = n_rows * n_cols
    size = math.prod(shape)
    n_mats = size // mat_size
    per_matrix = k is None
    # The vector path needs C order: its chunks are counted from the 16-byte
    # boundary at or before the first element, so every chunk but the first
    # and last is a whole, aligned 64 bytes.
    vector = contiguous and VECTOR_BYTES % itemsize == 0
    if not vector or size * itemsize < vector_from:
        scalars: tuple[tuple[str, int], ...] = (
            ("n_cols", n_cols),
            ("mat_size", mat_size),
        )
        if k is not None:
            scalars += (("k", k),)
        return (Launch(per_matrix, size >= _INT32_LIMIT, False, scalars, 0, 0, n_mats),)
    # Per-matrix k over matrices under one chunk (so never wide): a chunk can
    # span N // (R*C) + 2 of them (N elements a chunk), whose k a kernel of
    # its own reads in a loop; over larger ones a chunk meets at most two.
    # Two kernels, not a branch: each keeps its instruction count and
    # registers. Scalar k needs neither (one k; small matrices repeat).
    small = per_matrix and mat_size * itemsize < CHUNK_BYTES
    wide = mat_size >= _INT32_LIMIT
    per_launch = n_mats if wide else (_INT32_LIMIT - 1) // mat_size
    launches = []
    for start in range(0, n_mats, per_launch):
        stop = min(start + per_launch, n_mats)
        head = ((address + start * mat_size * itemsize) % VECTOR_BYTES) // itemsize
        chunks = -(-((stop - start) * mat_size + head) * itemsize // CHUNK_BYTES)
        # Whole warps: every lane of a warp takes part in its stores.
        threads = -(-chunks // WARP) * WARP
        scalars = vector_scalars(
            n_rows, n_cols, stop - start, k, 64 if wide else 32, head, small
        )
        launches.append(
            Launch(per_matrix, wide, True, scalars, threads, start, stop, small)
        )
    return tuple(launches)


@functools.lru_cache(maxsize=256)
def arguments(launch: Launch) -> tuple[Any, ...]:
    """The scalars as NumPy scalars of the kernel's parameter types."""
    types = scalar_params(launch.per_matrix, launch.wide, launch.vector, launch.small)
    return tuple(
        np.dtype(dtype).type(value)
        for (_, dtype), (_, value) in zip(types, launch.scalars, strict=True)
    )
