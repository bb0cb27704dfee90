"""The CuPy kernels' operations and parameters, and the vector path's
launch constants: magic-number division, where a matrix's ones lie, the
comb of ones, the repeating pattern of tiny matrices. Pure Python: the CPU
tests build the kernels' sources and run their operations from these."""

from __future__ import annotations

import functools

__all__ = [
    "CHUNK_BYTES",
    "FIXED_PARAMS",
    "OP_PER_MATRIX",
    "OP_SCALAR",
    "OP_VECTOR",
    "OP_VECTOR_PER_MATRIX",
    "OP_VECTOR_PER_SMALL_MATRIX",
    "VECTOR_BYTES",
    "VECTOR_PARAMS",
    "diag_extent",
    "divider",
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
# per-matrix k over smaller matrices (a chunk can span many, and reads the k
# of each). Their operations name the kernel's parameters, which
# VECTOR_PARAMS lists in order (kind -> names); U is the unsigned index type
# (unsigned int below 2**31 elements, else unsigned long long).
CHUNK_BYTES = 64
VECTOR_BYTES = 16
OP_VECTOR = (
    "eyelike_vector<T, U>(&out[0], (U)i, n, head, mat_size, mat_magic, "
    "mat_shift, step, step_magic, step_shift, comb, lo, end, rep_lo, rep_hi);"
)
OP_VECTOR_PER_MATRIX = (
    "eyelike_vector_batched_k<T, U>(&out[0], (U)i, n, head, mat_size, "
    "mat_magic, mat_shift, step, step_magic, step_shift, comb, n_rows, &kk[0]);"
)
OP_VECTOR_PER_SMALL_MATRIX = (
    "eyelike_vector_batched_k_small<T, U>(&out[0], (U)i, n, head, mat_size, "
    "mat_magic, mat_shift, step, comb, n_rows, &kk[0]);"
)
_GRID_PARAMS = (
    "n",
    "head",
    "mat_size",
    "mat_magic",
    "mat_shift",
    "step",
    "step_magic",
    "step_shift",
    "comb",
)
VECTOR_PARAMS = {
    "scalar": (*_GRID_PARAMS, "lo", "end", "rep_lo", "rep_hi"),
    "per_matrix": (*_GRID_PARAMS, "n_rows"),
    # No divider for S: a small matrix's ones need no division.
    "small": (*_GRID_PARAMS[:6], "comb", "n_rows"),
}
# Parameters of a fixed width; every other one is U.
FIXED_PARAMS = {"comb": "uint64", "rep_lo": "uint64", "rep_hi": "uint64"}


def divider(d: int, bits: int) -> tuple[int, int]:
    """Magic numbers for dividing by ``d`` with a multiply-high and a shift.

    PyTorch's ``IntDivider`` (``aten/src/ATen/cuda/detail/IntegerDivider.cuh``)
    at either width: ``eyelike_divide`` computes ``n // d`` as
    ``(mulhi(n, magic) + n) >> shift``, exactly for ``n < 2**(bits - 1)``.

    Parameters
    ----------
    d
        The divisor, ``1 <= d < 2**bits``.
    bits
        The width of the kernel's unsigned index type, 32 or 64.

    Returns
    -------
    tuple of int
        ``(magic, shift)``: shift = ceil(log2 d), magic = 2**bits *
        (2**shift - d) // d + 1, which fits in ``bits`` bits because
        2**shift < 2 d.
    """
    if not 1 <= d < 2**bits:
        msg = f"divisor {d} out of range for {bits}-bit division"
        raise ValueError(msg)
    shift = (d - 1).bit_length()
    magic = (2**bits * (2**shift - d)) // d + 1
    return magic, shift


def diag_extent(n_rows: int, n_cols: int, k: int) -> tuple[int, int]:
    """Where the ones of an R x C matrix with offset k lie, flattened.

    Parameters
    ----------
    n_rows, n_cols
        R and C.
    k
        The offset, clamped into ``[-R, C]``.

    Returns
    -------
    tuple of int
        ``(lo, end)``: the ones are at lo, lo + C + 1, lo + 2 (C + 1), ...
        below end; none when end <= lo. The header's ``eyelike_diag_of``
        computes the same on the device for per-matrix k.
    """
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
    """The vector kernel's scalar arguments for one launch.

    Parameters
    ----------
    n_rows, n_cols
        The matrix shape, R and C.
    n_mats
        The matrices the launch fills.
    k
        The clamped scalar offset, or None for per-matrix offsets (the
        kernel reads them from its ``kk`` array).
    bits
        The index width: 32, or 64 for matrices of 2**31+ elements.
    head
        Elements between the 16-byte boundary at or before the output's
        first element and that element.
    small
        Per-matrix k over matrices under one chunk (`small_matrices`): the
        kernel of kind ``"small"``, whose parameters are a subset of those
        of kind ``"per_matrix"``, with the same values.

    Returns
    -------
    tuple of (str, int)
        ``(name, value)`` in the order of `VECTOR_PARAMS`.
    """
    mat_size = n_rows * n_cols
    step = n_cols + 1
    values = [n_mats * mat_size, head, mat_size, *divider(mat_size, bits)]
    values += [step, *divider(step, bits), _comb(step)]
    if k is None:
        values += [n_rows]
    else:
        values += [*diag_extent(n_rows, n_cols, k), *_repeat(n_rows, n_cols, k)]
    # The small-matrix kernel takes a subset of the per-matrix parameters.
    named = dict(zip(VECTOR_PARAMS[vector_kind(k is None, False)], values, strict=True))
    return tuple(
        (name, named[name]) for name in VECTOR_PARAMS[vector_kind(k is None, small)]
    )


def vector_kind(per_matrix: bool, small: bool) -> str:
    """The vector kernel's kind, the key of `VECTOR_PARAMS`: ``"scalar"``,
    ``"per_matrix"`` or ``"small"`` (per-matrix k, matrices under a chunk)."""
    if not per_matrix:
        return "scalar"
    return "small" if small else "per_matrix"
