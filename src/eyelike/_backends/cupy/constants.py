"""The CuPy kernels' operations and parameters, and the vector path's
launch constants: magic-number division, where a matrix's ones lie, the
comb of ones, the repeating pattern of tiny matrices. Pure Python: the CPU
tests build the kernels' sources and run their operations from these."""

from __future__ import annotations

import functools

__all__ = [
    "CHUNK_BYTES",
    "OP_PER_MATRIX",
    "OP_SCALAR",
    "OP_VECTOR",
    "OP_VECTOR_PER_MATRIX",
    "OP_VECTOR_PER_SMALL_MATRIX",
    "SUFFIX",
    "VECTOR_BYTES",
    "VECTOR_OPS",
    "VECTOR_PARAMS",
    "diag_extent",
    "divider",
    "scalar_params",
    "vector_kind",
    "vector_scalars",
]

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
OP_VECTOR = VECTOR_OPS["scalar"]
OP_VECTOR_PER_MATRIX = VECTOR_OPS["per_matrix"]
OP_VECTOR_PER_SMALL_MATRIX = VECTOR_OPS["small"]


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
    `kernels.kernel` declares and `planning.arguments` converts to."""
    index = "int64" if wide else "int32"
    if not vector:
        return (("n_cols", index), ("mat_size", index)) + (
            () if per_matrix else (("k", index),)
        )
    names = VECTOR_PARAMS[vector_kind(per_matrix, small)]
    return tuple((name, FIXED_PARAMS.get(name, "u" + index)) for name in names)


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
