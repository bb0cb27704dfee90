"""Host-side planning of the CuPy kernels' launches: `plan` refuses an
output no kernel can store to, picks the path (and, for per-matrix k, the
vector kernel for matrices under one chunk) and splits large outputs into
32-bit launches; `arguments` gives a launch's scalars their types. The
kernels' operations and constants: ``constants.py``. Pure Python and NumPy:
testable, and tested, without CuPy.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from .constants import (
    CHUNK_BYTES,
    FIXED_PARAMS,
    VECTOR_BYTES,
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
    "small_matrices",
    "use_vector",
]


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
        The vector path's thread count (CuPy's ``size=``): one per chunk,
        rounded up to whole warps; 0 for the element path.
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
    vector_from: int = VECTOR_FROM_BYTES,
) -> tuple[Launch, ...]:
    """How `eye` fills a non-empty output of ``shape`` at ``address``.

    The element path is one launch: every output under ``vector_from``
    bytes, and every output the vector path cannot store to. The vector
    path uses 32-bit index arithmetic, so an output of 2**31 or more
    elements whose matrices are smaller takes one launch per slice of whole
    matrices under 2**31 elements; only matrices of 2**31 or more elements
    take the 64-bit vector kernel. Per-matrix k over matrices under one
    chunk takes the vector kernel of its own (`small_matrices`), in 32-bit
    launches like any output of matrices that small. Pure Python: the CPU
    tests build the kernels' sources and run their operations from exactly
    these decisions and constants.

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
    vector_from
        The smallest output, in bytes, that takes the vector path where it
        can (`VECTOR_FROM_BYTES`: a smaller one's call is mostly the host's
        time, and the element launch's is shorter); 0: every output it
        can store to (the tests of the vector kernel).

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
    if not use_vector(itemsize, contiguous) or size * itemsize < vector_from:
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
        # Whole warps: every lane of a warp takes part in its stores.
        chunks = -(-(elements + head) * itemsize // CHUNK_BYTES)
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
    if not launch.vector:
        index: Any = np.int64 if launch.wide else np.int32
        return tuple(index(value) for _, value in launch.scalars)
    unsigned = "uint64" if launch.wide else "uint32"
    return tuple(
        np.dtype(FIXED_PARAMS.get(name, unsigned)).type(value)
        for name, value in launch.scalars
    )
