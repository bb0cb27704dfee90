"""CuPy on a real GPU: parity with NumPy, every layout of ``out``, streams,
devices and sizes past 2**31 elements (torch CUDA and JAX GPU:
``test_gpu_namespaces.py``). Skipped, with the probe's reason, where no
CUDA device is present (the kernel source is still checked on the CPU by
test_kernel_source.py); ``EYELIKE_REQUIRE_GPU=1`` makes them run, and fail,
there instead.

Each test that targets one bug says in its docstring which bug, and why its
assertions cannot pass with it."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from helpers import GPU_REASON, HAS_GPU, SENTINEL, missing_gpu_piece, reference

import eyelike
from eyelike._backends.cupy import planning as cupy_plan
from eyelike._pipeline import _offsets

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason=GPU_REASON)]

DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "float32", "float64", "complex64", "complex128",
    "bfloat16",
]  # fmt: skip
OFFSETS = [0, 1, -1, 3, -4, 2**31, -(2**31), 2**63, -(2**63), 10**30]
# Per-matrix offsets for a batch of 6, huge ones included (clamped by eyelike).
KS = [0, 1, -1, 2**63, -5, 2]


@pytest.fixture
def cp() -> Any:
    # A plain import, not importorskip: these tests only run where the probe
    # saw CuPy, or where EYELIKE_REQUIRE_GPU=1 says a missing CuPy must fail.
    import cupy

    return cupy


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", OFFSETS)
def test_parity(cp: Any, dtype: str, k: int) -> None:
    got = eyelike.eye(3, 5, k=k, batch_shape=(2, 3), dtype=dtype, xp=cp)
    assert isinstance(got, cp.ndarray)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.get(), reference((2, 3), 3, 5, k))


@pytest.mark.parametrize("dtype", DTYPES)
def test_per_matrix_k_and_out(cp: Any, dtype: str) -> None:
    got = eyelike.eye(4, 3, k=KS, batch_shape=6, dtype=dtype, xp=cp)
    np.testing.assert_array_equal(got.get(), reference((6,), 4, 3, KS))
    got = eyelike.eye(4, 3, k=cp.asarray([[1], [-2]]), batch_shape=(2, 3), xp=cp)
    np.testing.assert_array_equal(got.get(), reference((2, 3), 4, 3, [[1], [-2]]))
    out = cp.full((6, 4, 3), SENTINEL, dtype=dtype)
    assert eyelike.eye(4, 3, k=KS, batch_shape=6, out=out) is out
    np.testing.assert_array_equal(out.get(), reference((6,), 4, 3, KS))


@pytest.mark.parametrize(
    "kind", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
)
def test_per_matrix_k_of_every_integer_type(cp: Any, kind: str) -> None:
    """Bug: clamping k straight into the kernels' int32 (one pass) with bounds
    outside k's own type, or a cast that wraps, would move or lose ones: each
    type's extremes and values past the matrix are here, over matrices under
    and over one chunk, and k broadcast over a batch dimension."""
    info = np.iinfo(kind)
    # (Filtered by comparison: a set of the type's whole range, as this test
    # once built, is 4 billion ints for int32 and killed the process.)
    wanted = {0, 1, 2, 5, 100, int(info.max), int(info.min), -1, -3, -100}
    ks = sorted(v for v in wanted if info.min <= v <= info.max)
    k = cp.asarray(ks, dtype=kind)
    for r, c in [(3, 4), (40, 50)]:
        got = eyelike.eye(r, c, k=k, batch_shape=len(ks), dtype="float32", xp=cp)
        np.testing.assert_array_equal(got.get(), reference((len(ks),), r, c, ks))
    backend = eyelike._backends.backend_of_array(k)
    assert _offsets(backend, k, (len(ks),), 3, 4, None).dtype == np.int32
    col = cp.asarray([[ks[0]], [ks[-1]]], dtype=kind)
    got = eyelike.eye(3, 4, k=col, batch_shape=(2, 5), xp=cp)
    want = reference((2, 5), 3, 4, [[ks[0]], [ks[-1]]])
    np.testing.assert_array_equal(got.get(), want)


def _view(cp: Any, layout: str, dtype: str) -> tuple[Any, Any]:
    """A (6, 4, 3) non-contiguous view, and the sentinel-filled buffer under it."""
    if layout == "every other row":
        base = cp.full((6, 8, 3), SENTINEL, dtype=dtype)
        return base, base[:, ::2]
    base = cp.full((6, 3, 4), SENTINEL, dtype=dtype)  # "transposed"
    return base, base.transpose(0, 2, 1)


@pytest.mark.parametrize("layout", ["every other row", "transposed"])
@pytest.mark.parametrize("k", [-1, KS], ids=["scalar k", "per-matrix k"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_out(cp: Any, dtype: str, k: Any, layout: str) -> None:
    """Bug: a kernel that writes only the ones (relying on a zeroed output),
    or that walks a strided ``out`` as if it were contiguous.

    The buffer starts at 7 everywhere, never zeros: a zero the kernel skips
    stays 7 and differs from the reference, and a write that lands in a gap
    between the view's rows (outside ``out``) turns a 7 there into 0 or 1,
    which the gap check sees. Both kernels (scalar and per-matrix k) run.
    """
    base, view = _view(cp, layout, dtype)
    assert not view.flags.c_contiguous
    assert eyelike.eye(4, 3, k=k, batch_shape=6, out=view) is view
    np.testing.assert_array_equal(view.get(), reference((6,), 4, 3, k))
    if layout == "every other row":
        gaps = base[:, 1::2].get()
        assert (gaps == np.array(SENTINEL, dtype=dtype)).all(), gaps


def test_eye_like_and_zero_sizes(cp: Any) -> None:
    x = cp.zeros((2, 4, 4), dtype=cp.float32)
    got = eyelike.eye_like(x, k=1)
    assert got.dtype == cp.float32
    assert got.device == x.device
    np.testing.assert_array_equal(got.get(), reference((2,), 4, 4, 1))
    for shape in [(0, 3), (3, 0), (0, 2, 2)]:
        assert eyelike.eye(*shape[-2:], batch_shape=shape[:-2], xp=cp).shape == shape


@pytest.mark.parametrize("batch", [8, 16], ids=["element path", "vector path"])
def test_non_default_stream(cp: Any, batch: int) -> None:
    """Bug: the kernel launched on the legacy default (null) stream, or any
    stream other than the current one, so work that callers order on their
    stream races with it.

    The call is captured into a CUDA graph on a non-blocking stream. Capture
    records the launches made on that stream and runs none of them; a launch
    that went elsewhere runs at once. So after capture and a whole-device
    synchronize the output must still hold its 7s (nothing ran), and after
    the graph is launched it must hold the eye (the launch was in the graph).
    A kernel on the wrong stream fails the first check, a kernel missing
    from the graph the second. (The allocating call differs only by the
    ``cupy.empty`` before this same launch; ``out=`` keeps allocation, which
    capture may refuse, out of the test.) Both kernel families: 8 x 64 x 64
    int32 (128 KiB) takes the element path, 16 x 64 x 64 (256 KiB) the
    vector path.
    """
    shape = (batch, 64, 64)
    (launch,) = cupy_plan.plan(shape, 0, 4, contiguous=True, address=256)
    assert launch.vector == (batch == 16)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        out = cp.full(shape, SENTINEL, dtype=cp.int32)
        # Compile and load the kernel before the capture: a capture must
        # hold the launch only.
        eyelike.eye(64, batch_shape=batch, out=out)
        out.fill(SENTINEL)
        stream.synchronize()
        stream.begin_capture()
        try:
            eyelike.eye(64, batch_shape=batch, out=out)
        finally:
            graph = stream.end_capture()
        cp.cuda.Device().synchronize()
        assert bool((out == SENTINEL).all()), "the kernel ran outside the stream"
        graph.launch(stream)
        stream.synchronize()
    np.testing.assert_array_equal(out.get(), reference((batch,), 64, 64, 0))
    with stream:  # and the allocating path gives the right result there
        got = eyelike.eye(64, batch_shape=batch, xp=cp, dtype="int32", k=[1] * batch)
    stream.synchronize()
    np.testing.assert_array_equal(got.get(), reference((batch,), 64, 64, 1))


@pytest.mark.parametrize("device", ["0", "Device(0)"])
def test_device_zero(cp: Any, device: str) -> None:
    """Bug: ``device=0`` taken for "no device" (``if device:``; 0 is falsy) or
    refused, and ``cupy.cuda.Device(0)`` refused or found unequal to the
    device of an ``out`` on device 0.

    Every call must succeed and land on device 0. With a second GPU, device 1
    is current during the calls, so a 0 read as "the default" lands on 1 and
    fails the ``device.id == 0`` check; on one GPU the refusal and mismatch
    bugs are what can show, and they raise.
    """
    dev: Any = 0 if device == "0" else cp.cuda.Device(0)
    with cp.cuda.Device(0):
        out = cp.full((2, 3, 4), SENTINEL, dtype=cp.float32)
    current = 1 if cp.cuda.runtime.getDeviceCount() > 1 else 0
    with cp.cuda.Device(current):
        got = eyelike.eye(3, 4, k=1, batch_shape=2, dtype="float32", xp=cp, device=dev)
        filled = eyelike.eye(3, 4, k=1, batch_shape=2, device=dev, out=out)
    assert got.device.id == 0
    assert filled is out
    for result in (got, out):
        np.testing.assert_array_equal(result.get(), reference((2,), 3, 4, 1))


def test_second_device(cp: Any) -> None:
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs a second CUDA device")
    got = eyelike.eye(3, xp=cp, device=1)
    assert got.device.id == 1
    with cp.cuda.Device(1):
        x = cp.zeros((3, 3))
    assert eyelike.eye_like(x).device.id == 1


def test_beyond_2_31_elements(cp: Any) -> None:
    """Bug: the 64-bit-index kernel (outputs of >= 2**31 elements) wrapping or
    truncating its flat index (a 32-bit ``i``, matrix number or remainder).

    Each output puts a one at its very last element, whose flat index is
    past 2**31, and at a few known places below; the sum then pins every
    other element to zero. A wrapped index leaves the last element 0 or puts
    a one elsewhere, so the element checks or the sum fail. Scalar k,
    per-matrix k and one matrix larger than 2**31 each take their own path.
    """
    free, _ = cp.cuda.runtime.memGetInfo()
    if free < 3 * 2**31:
        reason = f"this test needs 6 GiB of free GPU memory; {free} bytes free"
        missing_gpu_piece(reason)
    cols = 2**29 + 2**18  # 2 matrices of 2 x cols: 2**31 + 2**20 uint8 elements
    top = cols - 2  # with k = top, row 1's one is the matrix's last element
    for k, ones in [
        (top, [(0, 0, top), (0, 1, top + 1), (1, 0, top), (1, 1, top + 1)]),
        ([5, top], [(0, 0, 5), (0, 1, 6), (1, 0, top), (1, 1, top + 1)]),
    ]:
        got = eyelike.eye(2, cols, batch_shape=2, k=k, dtype="uint8", xp=cp)
        assert got.size > 2**31
        assert (1, 1, cols - 1) in ones  # the last element is among them
        for index in ones:
            assert int(got[index]) == 1, (k, index)
        assert int(got.sum()) == len(ones), k
        del got
    n = 46341  # one matrix: 46341**2 > 2**31 elements
    got = eyelike.eye(n, n, dtype="uint8", xp=cp)
    assert got.size > 2**31
    assert int(got[n - 1, n - 1]) == 1
    assert int(got.sum()) == n
    assert int(cp.trace(got)) == n
    del got


def test_kernel_cache_built_once_under_threads(cp: Any) -> None:
    from eyelike._backends import cupy as cupy_backend

    cupy_backend.kernel.cache_clear()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                got = eyelike.eye(5, batch_shape=3, k=1, xp=cp, dtype="float32")
                np.testing.assert_array_equal(got.get(), reference((3,), 5, 5, 1))
        except BaseException as exc:  # reported below, in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert cupy_backend.kernel.cache_info().currsize == 1
