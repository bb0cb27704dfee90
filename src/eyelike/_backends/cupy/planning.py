"""Host-side planning of the CuPy kernels (``kernels/eye.cuh``): their
operations and parameters, their launches (`plan`) and typed scalars
(`arguments`), and the vector path's launch constants: magic-number
division, where a matrix's ones lie, the comb of ones, the repeating pattern
of tiny matrices. Pure Python and NumPy: the CPU tests build the kernels'
sources and run their operations from these, without CuPy."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

__all__ = [
    "VECTOR_FROM_BYTES",
    "Launch",
    "arguments",
    "check_alignment",
    "kernel_spec",
    "offsets_dtype",
    "plan",
]

_INT32_LIMIT = 2**31  # I = int iff the flat index fits in it
WARP = 32  # threads that store a vector launch's chunks together
# Outputs of fewer bytes take the element path, whatever their layout: its
# launch passes 3 scalars where the vector one passes 9 to 13, and on
# an H200's host that made a 3x3 cost 12.3-14.9 us against 18.3-23.9 us
# (launch and cupy.empty, three runs). Below 256 KiB the element path's
# slower GPU time (a quarter of the memset's speed) costs under 0.3 us more,
# well under the host time it saves.
VECTOR_FROM_BYTES = 2**18

# ``i`` is CuPy's loop index (always ptrdiff_t): narrowing it before ``%``
# keeps the division 32-bit when the output is small enough (I = int).
OP_SCALAR = "out = eyelike_value<T, I>((I)i % mat_size, n_cols, k);"
OP_PER_MATRIX = (
    "I b = (I)i / mat_size; "
    "out = eyelike_value<T, I>((I)i - b * mat_size, n_cols, kk[b]);"
)

# The vector path: one chunk of CHUNK_BYTES per thread, written as aligned
# stores of VECTOR_BYTES. Three kernels (`vector_kind`): scalar k; per-matrix
# k over matrices of at least one chunk (a chunk meets at most two of them);
# per-matrix k over smaller ones (a chunk can span many, and reads the k of
# each). Their scalar parameters in order are U, the unsigned index type,
# but those of FIXED_PARAMS; the per-matrix kernels then take ``kk``.
CHUNK_BYTES = 64
VECTOR_BYTES = 16
_GRID = ("n", "head", "mat_size", "mat_magic", "mat_shift", "step")
_BAND = (*_GRID, "step_magic", "step_shift", "comb")
VECTOR_PARAMS = {
    "scalar": (*_BAND, "lo", "end", "rep_lo", "rep_hi"),
    "per_matrix": (*_BAND, "n_rows"),
    # No divider for S: a small matrix's ones need no division.
    "small": (*_GRID, "comb", "n_rows"),
}
FIXED_PARAMS = {"comb": "uint64", "rep_lo": "uint64", "rep_hi": "uint64"}
# Each kind's kernel is eyelike_eye_vector<suffix>, and calls the header's
# eyelike_vector<suffix>; the element path's is eyelike_eye<suffix>.
SUFFIX = {"scalar": "", "per_matrix": "_batched_k", "small": "_batched_k_small"}


def _vector_op(kind: str) -> str:
    """A vector kernel's operation: its device function, given the output,
    the chunk, the parameters in order and (per-matrix k) ``kk``."""
    args = [*VECTOR_PARAMS[kind], *([] if kind == "scalar" else ["&kk[0]"])]
    return f"eyelike_vector{SUFFIX[kind]}<T, U>(&out[0], (U)i, {', '.join(args)});"


VECTOR_OPS = {kind: _vector_op(kind) for kind in VECTOR_PARAMS}


def vector_kind(per_matrix: bool, small: bool) -> str:
    """The key of `VECTOR_PARAMS` (``"small"``: per-matrix k over matrices
    under one chunk)."""
    if not per_matrix:
        return "scalar"
    return "small" if small else "per_matrix"


def scalar_params(
    per_matrix: bool, wide: bool, vector: bool, small: bool
) -> tuple[tuple[str, str], ...]:
    """A kernel's scalar parameters in order, as ``(name, NumPy type)``: what
    `kernel` declares and `arguments` converts to."""
    index = "int64" if wide else "int32"
    if not vector:
        return (("n_cols", index), ("mat_size", index)) + (
            () if per_matrix else (("k", index),)
        )
    names = VECTOR_PARAMS[vector_kind(per_matrix, small)]
    return tuple((name, FIXED_PARAMS.get(name, "u" + index)) for name in names)


def kernel_spec(
    per_matrix: bool, wide: bool, vector: bool, small: bool
) -> tuple[str, str, str, str]:
    """`cupy.ElementwiseKernel`'s parameters, output, operation and name for
    one k mode, index width and path (``small``: per-matrix k over matrices
    under one chunk)."""
    kind = vector_kind(per_matrix, small)
    params = [f"{t} {n}" for n, t in scalar_params(per_matrix, wide, vector, small)]
    if per_matrix:
        params.append(f"raw {'int64' if wide else 'int32'} kk")
    if vector:
        # A raw output and an explicit size=: a thread is a chunk, not an
        # element (CuPy's pattern for such kernels).
        name = f"eyelike_eye_vector{SUFFIX[kind]}"
        return ", ".join(params), "raw T out", VECTOR_OPS[kind], name
    operation = OP_PER_MATRIX if per_matrix else OP_SCALAR
    return ", ".join(params), "T out", operation, f"eyelike_eye{SUFFIX[kind]}"


def divider(d: int, bits: int) -> tuple[int, int]:
    """``(magic, shift)`` for ``eyelike_divide``: ``n // d`` as ``(mulhi(n,
    magic) + n) >> shift``, exact for ``n < 2**(bits - 1)``. PyTorch's
    ``IntDivider`` (``aten/src/ATen/cuda/detail/IntegerDivider.cuh``) at
    either width; magic fits in ``bits`` bits because 2**shift < 2 d."""
    if not 1 <= d < 2**bits:
        msg = f"divisor {d} out of range for {bits}-bit division"
        raise ValueError(msg)
    shift = (d - 1).bit_length()
    magic = (2**bits * (2**shift - d)) // d + 1
    return magic, shift


def diag_extent(n_rows: int, n_cols: int, k: int) -> tuple[int, int]:
    """``(lo, end)``: the ones of an R x C matrix with offset k (clamped into
    ``[-R, C]``), flattened, are at lo, lo + C + 1, lo + 2 (C + 1), ... below
    end; none when end <= lo. The header's ``eyelike_diag_of`` computes the
    same on the device for per-matrix k."""
    lo = k if k >= 0 else -k * n_cols
    return lo, min(n_rows, n_cols - k) * (n_cols + 1) + k - n_cols


def _every(step: int, count: int) -> int:
    """Bits 0, step, 2 step, ... (count of them)."""
    return ((1 << (step * count)) - 1) // ((1 << step) - 1)


def _comb(step: int) -> int:
    """Bits 0, S, 2S, ... below 64: the ones of a row-major band of step S."""
    if step >= 64:  # bit 0 only (and no 2**S-sized intermediate)
        return 1
    return _every(step, -(-64 // step)) & (2**64 - 1)


def _repeat(n_rows: int, n_cols: int, k: int) -> tuple[int, int]:
    """For matrices under 64 elements: bit j of the 128-bit pattern is the
    value at flat position j % (R*C); as (low, high) 64-bit halves."""
    mat_size = n_rows * n_cols
    if mat_size >= 64:
        return 0, 0
    lo, end = diag_extent(n_rows, n_cols, k)
    ones = -(-(end - lo) // (n_cols + 1)) if end > lo else 0
    matrix = _every(n_cols + 1, ones) << lo  # one matrix's value bits
    bits = matrix * _every(mat_size, -(-128 // mat_size)) & (2**128 - 1)
    return bits & (2**64 - 1), bits >> 64


@functools.lru_cache(maxsize=256)
def vector_scalars(
    n_rows: int,
    n_cols: int,
    n_mats: int,
    k: int | None,
    bits: int,
    head: int,
    small: bool = False,
) -> tuple[tuple[str, int], ...]:
    """The vector kernel's scalars, ``(name, value)`` in the order of
    `VECTOR_PARAMS`, for a launch over ``n_mats`` R x C matrices with
    clamped offset ``k`` (None: per matrix, in ``kk``), index width
    ``bits``, ``head`` elements between the 16-byte boundary at or before
    the first element and that element, and (``small``) the kernel for
    per-matrix k over matrices under one chunk."""
    mat_size = n_rows * n_cols
    step = n_cols + 1
    values = {"n": n_mats * mat_size, "head": head, "mat_size": mat_size}
    values["mat_magic"], values["mat_shift"] = divider(mat_size, bits)
    values["step_magic"], values["step_shift"] = divider(step, bits)
    values |= {"step": step, "comb": _comb(step), "n_rows": n_rows}
    if k is not None:
        values["lo"], values["end"] = diag_extent(n_rows, n_cols, k)
        values["rep_lo"], values["rep_hi"] = _repeat(n_rows, n_cols, k)
    names = VECTOR_PARAMS[vector_kind(k is None, small)]
    return tuple((name, values[name]) for name in names)


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
        given = () if k is None else (("k", k),)
        scalars = (("n_cols", n_cols), ("mat_size", mat_size), *given)
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
