"""The CuPy vector kernel (C-contiguous outputs, 64-byte chunks) on a GPU.

Skipped, with the probe's reason, where no CUDA device is present: there
test_kernel_source.py runs the same operation through the host shim, and
test_kernel_nvrtc.py / test_kernel_sass.py compile and count CuPy's source.
On a GPU these are the checks nothing on the CPU can make: that CuPy hands
the kernel the pointer, alignment and launch size the host planned, that
the 16-byte stores land where they should for every misaligned start, that
an out whose address is not element-aligned is refused before any launch,
and that outputs past 2**31 elements (32-bit slices, and the 64-bit kernel
for matrices of 2**31+ elements) are right.

Each test says in its docstring which bug it targets.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from helpers import GPU_REASON, HAS_GPU, reference
from helpers.kernel_build import DTYPES

import eyelike
from eyelike._backends import cupy as cupy_backend
from eyelike._backends.cupy import planning as cupy_plan

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason=GPU_REASON)]

SENTINEL = 7  # never a value eyelike writes
# (batch, R, C): one chunk or less, rows and matrices that straddle chunks,
# dense (C + 1 < a chunk) and sparse bands, single rows and columns.
SHAPES = [
    (1, 1, 1), (3, 1, 1), (5, 3, 3), (2, 4, 4), (7, 2, 3), (3, 1, 64),
    (3, 64, 1), (2, 17, 33), (4, 33, 17), (2, 65, 65), (3, 8, 100), (1, 300, 7),
]  # fmt: skip

# (batch, R, C) of matrices under 64 bytes for some dtypes: chunks that hold
# many whole matrices (up to 64 of the 1 x 1 ones), batches that end inside
# a chunk or on its boundary.
SMALL_SHAPES = [
    (1, 1, 1), (70, 1, 1), (1000, 1, 1), (257, 1, 2), (129, 2, 3), (100, 3, 2),
    (33, 2, 2), (9, 3, 5),
]  # fmt: skip


def _dtype(name: str) -> Any:
    if name == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _missing(reason: str) -> None:
    """Skip for a missing GPU resource; fail under EYELIKE_REQUIRE_GPU=1."""
    if os.environ.get("EYELIKE_REQUIRE_GPU", "0") != "0":
        pytest.fail(f"EYELIKE_REQUIRE_GPU is set, but {reason}")
    pytest.skip(reason)


@pytest.fixture
def cp() -> Any:
    import cupy

    if cupy.cuda.runtime.is_hip:
        pytest.skip("ROCm: every output takes the element path (32-lane warps)")
    return cupy


def _vector_fill(out: Any, k: Any) -> tuple[cupy_plan.Launch, ...]:
    """Fill ``out`` (C-contiguous, element-aligned; ``k`` clamped here) by the
    vector kernel whatever its size: `plan` with ``vector_from=0``, then the
    backend's own `fill`. How these tests reach the vector kernel through
    outputs small enough that `eye` sends them to the element path."""
    per_matrix = not isinstance(k, int)
    n_rows, n_cols = out.shape[-2:]
    # The kernels' contract: k clamped into [-R, C] (the pipeline's step).
    if per_matrix:
        k = (k if hasattr(k, "clip") else np.asarray(k)).clip(-n_rows, n_cols)
    else:
        k = min(max(k, -n_rows), n_cols)
    launches = cupy_plan.plan(
        out.shape, None if per_matrix else k, out.itemsize,
        contiguous=True, address=out.data.ptr, vector_from=0,
    )  # fmt: skip
    assert all(launch.vector for launch in launches)
    cupy_backend.fill(out, k, launches)
    return launches


def _ks(n_rows: int, n_cols: int) -> list[int]:
    return sorted({0, 1, -1, n_cols - 1, -(n_rows - 1), n_cols, -n_rows, 2, -2})


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_kernel_matches_at_every_shape(cp: Any, dtype: str) -> None:
    """Bug: a vector-path output wrong for some shape, offset or dtype (a
    chunk's mask, the words built from it, the matrix a chunk runs into, a
    warp's shuffled pieces).

    Every shape, every offset near the diagonal's ends, scalar and
    per-matrix k, written by the vector kernel (`_vector_fill`: these
    outputs are small enough that `eye` itself takes the element path,
    checked here too).
    """
    dt = _dtype(dtype)
    for b, n_rows, n_cols in SHAPES:
        ks = [(-1) ** j * j % (n_cols + 1) for j in range(b)]
        for k in [*_ks(n_rows, n_cols), ks]:
            out = cp.full((b, n_rows, n_cols), SENTINEL, dtype=dt)
            assert out.data.ptr % 256 == 0  # what plan's head = 0 relies on
            _vector_fill(out, k)
            want = reference((b,), n_rows, n_cols, k).astype(dt)
            np.testing.assert_array_equal(
                out.get(), want, err_msg=f"{b, n_rows, n_cols, k}"
            )
            got = eyelike.eye(n_rows, n_cols, k=k, batch_shape=b, dtype=dt, xp=cp)
            np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_out_at_every_misaligned_start(cp: Any, dtype: str) -> None:
    """Bug: a store that assumes the output starts on a 16-byte boundary, a
    partial first or last chunk written wrongly or not at all, or a write
    outside ``out``.

    ``out`` is a view starting j elements into a sentinel-filled buffer, for
    every j below 16 / itemsize (every start an element-aligned output can
    have), written by the vector kernel and by `eye` (the element path, at
    these sizes), each over sentinels: the output must equal the reference
    and every sentinel outside it must survive.
    """
    dt = _dtype(dtype)
    for b, n_rows, n_cols in [(3, 5, 7), (2, 17, 33), (4, 8, 8), (3, 40, 50)]:
        size = b * n_rows * n_cols
        for j in range(16 // dt.itemsize):
            for k in (1, [1, -2, 0, 3][:b]):
                for by_eye in (False, True):
                    base = cp.full(size + 64, SENTINEL, dtype=dt)
                    out = base[j : j + size].reshape(b, n_rows, n_cols)
                    if by_eye:
                        got = eyelike.eye(n_rows, n_cols, k=k, batch_shape=b, out=out)
                        assert got is out
                    else:
                        _vector_fill(out, k)
                    want = reference((b,), n_rows, n_cols, k).astype(dt)
                    np.testing.assert_array_equal(
                        out.get(), want, err_msg=f"start {j}, by eye {by_eye}"
                    )
                    rest = np.concatenate([base[:j].get(), base[j + size :].get()])
                    assert (rest == np.array(SENTINEL, dtype=dt)).all(), (j, k)


@pytest.mark.parametrize("dtype", DTYPES)
def test_per_matrix_k_over_small_matrices(cp: Any, dtype: str) -> None:
    """Bug: the small-matrix kernel (per-matrix k over matrices under 64
    bytes, whose chunks span many matrices) reading the k of the wrong
    matrix, placing or cutting a matrix's ones wrongly, reading kk past its
    end, or mishandling a misaligned start.

    Batches of tiny matrices (64 of the 1 x 1 ones in a uint8 chunk), each
    with a random k, written into a sentinel-filled buffer at every start an
    element-aligned output can have, by the vector kernel (`_vector_fill`,
    whose plan must be the small-matrix kernel's): the output must equal
    the reference and every sentinel outside it must survive.
    """
    dt = _dtype(dtype)
    rng = np.random.default_rng(7)
    for b, n_rows, n_cols in SMALL_SHAPES:
        if n_rows * n_cols * dt.itemsize >= cupy_plan.CHUNK_BYTES:
            continue
        size = b * n_rows * n_cols
        ks = rng.integers(-n_rows, n_cols + 1, size=b)
        for j in range(16 // dt.itemsize):
            base = cp.full(size + 64, SENTINEL, dtype=dt)
            out = base[j : j + size].reshape(b, n_rows, n_cols)
            (launch,) = _vector_fill(out, cp.asarray(ks))
            assert launch.small
            want = reference((b,), n_rows, n_cols, ks.tolist()).astype(dt)
            np.testing.assert_array_equal(
                out.get(), want, err_msg=f"{b, n_rows, n_cols} start {j}"
            )
            rest = np.concatenate([base[:j].get(), base[j + size :].get()])
            assert (rest == np.array(SENTINEL, dtype=dt)).all(), (b, j)


K_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("kind", K_DTYPES)
def test_per_matrix_k_of_every_dtype_and_extreme_matches_numpy(
    cp: Any, kind: str
) -> None:
    """Bug: a per-matrix k whose clamp wraps (a uint64 above 2**63 read as
    negative, int64's minimum negated, int8's -128 widened wrongly) moves or
    loses ones. Each integer dtype's extremes and values around the
    matrix's bounds, over matrices under and over one chunk, through `eye`
    on the element path and (4096 matrices, where that is 256 KiB or more)
    the vector path, against eyelike on NumPy with the same k."""
    info = np.iinfo(kind)
    wanted = {0, 1, -1, 2, -2, 3, -3, 4, -4, 5, 6, -6, 100, -100}
    wanted |= {int(info.min), int(info.max), int(info.min) + 1, int(info.max) - 1}
    ks = np.array(sorted(v for v in wanted if info.min <= v <= info.max), dtype=kind)
    for n_rows, n_cols in [(3, 5), (2, 2), (9, 9)]:
        for batch in (len(ks), 4096):  # the element path, the vector one
            k = np.resize(ks, batch)
            for dtype in ("uint8", "float64"):
                want = eyelike.eye(n_rows, n_cols, k=k, batch_shape=batch, dtype=dtype)
                got = eyelike.eye(
                    n_rows, n_cols, k=cp.asarray(k), batch_shape=batch,
                    dtype=dtype, xp=cp,
                )  # fmt: skip
                np.testing.assert_array_equal(got.get(), want, err_msg=str(k.shape))


@pytest.mark.parametrize("dtype", DTYPES)
def test_misaligned_out_is_refused_before_launch(cp: Any, dtype: str) -> None:
    """Bug: a C-contiguous out whose address is not a multiple of its item
    size planned onto the element kernel, whose misaligned stores are a
    device fault that poisons the process's CUDA context (complex at half
    its alignment included). Refused with a ValueError; the bytes stay as
    they were, and the context still works afterwards."""
    dt = _dtype(dtype)
    size = dt.itemsize
    n = 4 * 3 * 3
    for offset in range(1, size):
        raw = cp.full(n * size + 2 * size, SENTINEL, dtype=cp.uint8)
        out = raw[offset : offset + n * size].view(dt).reshape(4, 3, 3)
        assert out.data.ptr % size == offset
        for k in (1, [0, 1, -1, 2]):
            with pytest.raises(ValueError, match=r"out starts at address 0x"):
                eyelike.eye(3, 3, k=k, batch_shape=4, out=out)
        cp.cuda.Device().synchronize()
        assert (raw.get() == SENTINEL).all(), (dtype, offset)
    # The context is intact: an aligned call still runs and is right.
    got = eyelike.eye(3, batch_shape=4, k=1, dtype=dt, xp=cp)
    np.testing.assert_array_equal(got.get() != 0, reference((4,), 3, 3, 1))


def test_float8_is_refused_and_bfloat16_accepted(cp: Any) -> None:
    """Bug: bfloat16 refused on CuPy, or float8 (which CuPy cannot hold)
    accepted and failing later inside CuPy."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    got = eyelike.eye(3, dtype=ml_dtypes.bfloat16, xp=cp)
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    with pytest.raises(TypeError, match="float8_e4m3fn is not supported by CuPy"):
        eyelike.eye(3, dtype=ml_dtypes.float8_e4m3fn, xp=cp)


def test_outputs_past_2_31_elements(cp: Any) -> None:
    """Bug: a 32-bit slice launch that writes the wrong slice, misses the
    last one or mishandles a slice's own start; the 64-bit kernel for
    matrices of 2**31+ elements wrong at a matrix boundary (the chunks that
    cross go element by element).

    Known ones are read back and the sum pins every other element to zero.
    """
    free, _ = cp.cuda.runtime.memGetInfo()
    if free < 9 * 2**30:
        _missing(f"this test needs 9 GiB of free GPU memory; {free} bytes free")
    # 2**31 + 2**20 uint8 elements in matrices of 2 x 2**10: slices.
    b, n_rows, n_cols = 2**20 + 2**9, 2, 2**10
    for k in (3, None):
        kk = k if k is not None else cp.arange(b, dtype=cp.int64) % 5 - 2
        got = eyelike.eye(n_rows, n_cols, k=kk, batch_shape=b, dtype="uint8", xp=cp)
        assert got.size > 2**31
        assert (
            len(cupy_plan.plan(got.shape, k, 1, contiguous=True, address=got.data.ptr))
            > 1
        )
        ks = np.full(b, 3) if k is not None else np.arange(b) % 5 - 2
        per_matrix = np.minimum(n_rows, n_cols - ks) - np.maximum(0, -ks)
        assert int(got.sum(dtype=cp.int64)) == int(per_matrix.clip(0).sum())
        for j in (0, b // 2, b - 1):
            np.testing.assert_array_equal(
                got[j].get(), reference((), n_rows, n_cols, int(ks[j]))
            )
        del got
    # Two matrices of 2**31 + 2**12 elements each: the 64-bit vector kernel.
    n_rows, n_cols = 2, 2**30 + 2**11
    for k in (n_cols - 2, [5, n_cols - 2]):
        got = eyelike.eye(n_rows, n_cols, k=k, batch_shape=2, dtype="uint8", xp=cp)
        (launch,) = cupy_plan.plan(
            got.shape, k if isinstance(k, int) else None, 1,
            contiguous=True, address=got.data.ptr,
        )  # fmt: skip
        assert launch.wide
        assert launch.vector
        ks = [k, k] if isinstance(k, int) else k
        for m, kv in enumerate(ks):
            assert int(got[m, 0, kv]) == 1
            assert int(got[m, 1, kv + 1]) == 1
        assert int(got.sum(dtype=cp.int64)) == 4
        del got


def test_kernel_cache_one_entry_per_path(cp: Any) -> None:
    """Bug: a kernel object built per call (recompiling, or growing the
    cache) instead of one per k mode, index width, path and, for per-matrix
    k on the vector path, matrix size class."""
    cupy_backend.kernel.cache_clear()
    # Outputs of 256 KiB or more: the vector path.
    for _ in range(3):
        eyelike.eye(64, batch_shape=16, k=1, xp=cp, dtype="float32")
        ks = cp.arange(3 * 2**14) % 3  # 3 x 3 int8 matrices: under a chunk
        eyelike.eye(3, batch_shape=ks.size, k=ks, xp=cp, dtype="int8")  # small
        ks = cp.arange(2**12) % 3  # 9 x 9 int8: 81 B, over a chunk
        eyelike.eye(9, batch_shape=ks.size, k=ks, xp=cp, dtype="int8")
    base = cp.zeros((3, 10, 5), dtype=cp.float32)
    eyelike.eye(5, batch_shape=3, k=1, out=base[:, ::2])  # element path
    eyelike.eye(5, batch_shape=3, k=1, xp=cp)  # small: the element path too
    assert cupy_backend.kernel.cache_info().currsize == 4
