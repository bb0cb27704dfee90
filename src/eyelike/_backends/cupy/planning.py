"""Host-side planning of the CuPy kernels' launches: the operations and
parameters of both kernel families, the launch constants of the vector path
(magic-number division, the comb of ones, the repeating pattern of tiny
matrices), and `plan`, which picks the path (and, for per-matrix k, the
vector kernel for matrices under one chunk) and splits large outputs into
32-bit launches. Pure Python and NumPy: testable, and tested, without CuPy.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

__all__ = [
    "CHUNK_BYTES",
    "FIXED_PARAMS",
    "OP_PER_MATRIX",
    "OP_SCALAR",
    "OP_VECTOR",
    "OP_VECTOR_PER_MATRIX",
    "OP_VECTOR_PER_SMALL_MATRIX",
    "VECTOR_PARAMS",
    "Launch",
    "arguments",
    "check_alignment",
    "diag_extent",
    "divider",
    "offsets_dtype",
    "plan",
    "small_matrices",
    "use_vector",
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
_INT32_LIMIT = 2**31  # I = int iff the flat index fits in it

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


def check_alignment(
    address: int, itemsize: int, strides: tuple[int, ...] = (), name: str = "out"
) -> None:
    """Refuse an output some element of which is not aligned for its type.

    Both kernel families store whole elements of ``T``, and CuPy's device
    type for every dtype is aligned to its item size (its ``complex<T>`` is
    ``__align__(2 * sizeof(T))``), so every element address must be a
    multiple of the item size: the first element's, and every stride in
    bytes along a dimension of more than one element. A misaligned store
    is a device fault, which leaves the process's CUDA context unusable;
    CuPy's own kernels (``fill``, ``copyto``) make no such check, so this
    one refuses such an array before launch rather than reroute it.

    Parameters
    ----------
    address
        The address of the first element.
    itemsize
        Bytes per element.
    strides
        The strides in bytes of the dimensions longer than one.
    name
        The parameter, for the message.

    Raises
    ------
    ValueError
        An element address that is not a multiple of ``itemsize``.
    """
    if address % itemsize:
        aligned = address & -address  # the largest power of two dividing it
        msg = (
            f"{name} starts at address {address:#x}, aligned to {aligned} "
            f"byte{'s' if aligned > 1 else ''}; its {itemsize}-byte elements need "
            f"{itemsize}-byte alignment on the device (a view into a buffer at an "
            "odd offset?): pass an aligned array, such as a fresh cupy.empty"
        )
        raise ValueError(msg)
    bad = [s for s in strides if s % itemsize]
    if bad:
        msg = (
            f"{name} has strides {strides} bytes, not all multiples of its "
            f"{itemsize}-byte elements, which need {itemsize}-byte alignment on "
            "the device: pass an aligned array, such as a fresh cupy.empty"
        )
        raise ValueError(msg)


def use_vector(itemsize: int, contiguous: bool) -> bool:
    """Whether the vector path serves an (element-aligned) output.

    It needs C order: the chunks are counted from the 16-byte boundary at
    or before the first element, so every chunk but the first and last is
    a whole, aligned 64 bytes. Any matrix
    size and either k mode: per-matrix k over matrices under one chunk takes
    the vector kernel of its own (`small_matrices`), which reads the k of
    each matrix a chunk touches once, where the element path would read one
    per element.

    Parameters
    ----------
    itemsize
        Bytes per element.
    contiguous
        Whether the output is C-contiguous.

    Returns
    -------
    bool
        True for the vector path, False for the element path.
    """
    return contiguous and VECTOR_BYTES % itemsize == 0


def small_matrices(per_matrix: bool, mat_size: int, itemsize: int) -> bool:
    """Whether a vector launch takes the kernel for per-matrix k over
    matrices smaller than one chunk.

    Over matrices of at least one chunk a chunk meets at most two of them,
    which `eyelike_vector_batched_k` handles without a loop; smaller ones
    let a chunk span up to ``N // (R*C) + 2`` matrices (N elements per
    chunk), each with its own k, which ``eyelike_vector_batched_k_small``
    reads in a loop. A kernel of its own, not a branch in the other: the
    other per-matrix kernel keeps its instruction count, and neither pays
    for the other's registers. Scalar k needs neither: one k, and a
    repeating pattern for small matrices.

    Parameters
    ----------
    per_matrix
        Whether k differs between matrices.
    mat_size
        Elements per matrix, R * C.
    itemsize
        Bytes per element.

    Returns
    -------
    bool
        True for the small-matrix kernel.
    """
    return per_matrix and mat_size * itemsize < CHUNK_BYTES


def vector_kind(per_matrix: bool, small: bool) -> str:
    """The vector kernel's kind, the key of `VECTOR_PARAMS`: ``"scalar"``,
    ``"per_matrix"`` or ``"small"`` (per-matrix k, matrices under a chunk)."""
    if not per_matrix:
        return "scalar"
    return "small" if small else "per_matrix"


@dataclasses.dataclass(frozen=True)
class Launch:
    """One kernel launch.

    Attributes
    ----------
    per_matrix, wide, vector
        The kernel: k mode, index width (64-bit), path.
    scalars
        Its scalar arguments, ``(name, value)`` in parameter order.
    threads
        The vector path's thread count (CuPy's ``size=``); 0 for the
        element path.
    start, stop
        The matrices (of the flattened batch) it fills.
    small
        The vector kernel for per-matrix k over matrices under one chunk
        (`small_matrices`); False otherwise.
    """

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
        """The vector kernel's kind (`vector_kind`); meaningless for the
        element path."""
        return vector_kind(self.per_matrix, self.small)


def offsets_dtype(n_rows: int, n_cols: int) -> type[np.signedinteger[Any]]:
    """The type the kernels read per-matrix offsets in, for (R, C) matrices:
    int32 (every k, clamped into [-R, C], fits) unless a matrix has 2**31
    elements or more and takes the 64-bit vector kernel. (An element-path
    launch of 2**31 or more elements in all reads int64: `eye` converts.)"""
    return np.int64 if n_rows * n_cols >= _INT32_LIMIT else np.int32


def plan(
    shape: tuple[int, ...],
    k: int | None,
    itemsize: int,
    *,
    contiguous: bool,
    address: int,
) -> tuple[Launch, ...]:
    """How `eye` fills a non-empty output of ``shape`` at ``address``.

    The element path is one launch. The vector path uses 32-bit index
    arithmetic, so an output of 2**31 or more elements whose matrices are
    smaller takes one launch per slice of whole matrices under 2**31
    elements; only matrices of 2**31 or more elements take the 64-bit
    vector kernel. Per-matrix k over matrices under one chunk takes the
    vector kernel of its own (`small_matrices`), in 32-bit launches like
    any output of matrices that small. Pure Python: the CPU tests build
    the kernels' sources and run their operations from exactly these
    decisions and constants.

    Parameters
    ----------
    shape
        The output's shape, ``(..., R, C)``, with no zero in it.
    k
        The clamped scalar offset, or None for per-matrix offsets.
    itemsize
        Bytes per element.
    contiguous
        Whether the output is C-contiguous.
    address
        The address of its first element.

    Returns
    -------
    tuple of Launch
        The launches, in order; together they fill every matrix once.

    Raises
    ------
    ValueError
        An address that is not a multiple of ``itemsize`` (`check_alignment`):
        no kernel can store to it.
    """
    check_alignment(address, itemsize)
    n_rows, n_cols = shape[-2:]
    mat_size = n_rows * n_cols
    size = math.prod(shape)
    n_mats = size // mat_size
    per_matrix = k is None
    if not use_vector(itemsize, contiguous):
        wide = size >= _INT32_LIMIT
        scalars: tuple[tuple[str, int], ...] = (
            ("n_cols", n_cols),
            ("mat_size", mat_size),
        )
        if k is not None:
            scalars += (("k", k),)
        return (Launch(per_matrix, wide, False, scalars, 0, 0, n_mats),)
    # Matrices under one chunk have fewer than 64 elements: never wide.
    small = small_matrices(per_matrix, mat_size, itemsize)
    wide = mat_size >= _INT32_LIMIT
    per_launch = n_mats if wide else (_INT32_LIMIT - 1) // mat_size
    launches = []
    for start in range(0, n_mats, per_launch):
        stop = min(start + per_launch, n_mats)
        first = address + start * mat_size * itemsize
        head = (first % VECTOR_BYTES) // itemsize
        elements = (stop - start) * mat_size
        threads = -(-(elements + head) * itemsize // CHUNK_BYTES)
        scalars = vector_scalars(
            n_rows, n_cols, stop - start, k, 64 if wide else 32, head, small
        )
        launches.append(
            Launch(per_matrix, wide, True, scalars, threads, start, stop, small)
        )
    return tuple(launches)


def arguments(launch: Launch) -> list[Any]:
    """The scalars as NumPy scalars of the kernel's parameter types."""
    if not launch.vector:
        index: Any = np.int64 if launch.wide else np.int32
        return [index(value) for _, value in launch.scalars]
    unsigned = "uint64" if launch.wide else "uint32"
    return [
        np.dtype(FIXED_PARAMS.get(name, unsigned)).type(value)
        for name, value in launch.scalars
    ]
