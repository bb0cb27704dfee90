"""The CuPy backend on a real GPU: parity with NumPy. Skipped, with a reason,
where no CUDA device is present (the kernel source is still checked on the
CPU by test_kernel_source.py)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from conftest import GPU_REASON, HAS_GPU, reference

import eyelike

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason=GPU_REASON)]

DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "float32", "float64", "complex64", "complex128",
]  # fmt: skip
OFFSETS = [0, 1, -1, 3, -4, 2**31, -(2**31), 2**63, -(2**63), 10**30]


@pytest.fixture
def cp() -> Any:
    return pytest.importorskip("cupy")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", OFFSETS)
def test_parity(cp: Any, dtype: str, k: int) -> None:
    got = eyelike.eye(3, 5, k=k, batch_shape=(2, 3), dtype=dtype, xp=cp)
    assert isinstance(got, cp.ndarray)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.get(), reference((2, 3), 3, 5, k))


@pytest.mark.parametrize("dtype", DTYPES)
def test_per_matrix_k_and_out(cp: Any, dtype: str) -> None:
    ks = [0, 1, -1, 2**63, -5, 2]
    got = eyelike.eye(4, 3, k=ks, batch_shape=6, dtype=dtype, xp=cp)
    np.testing.assert_array_equal(got.get(), reference((6,), 4, 3, ks))
    got = eyelike.eye(4, 3, k=cp.asarray([[1], [-2]]), batch_shape=(2, 3), xp=cp)
    np.testing.assert_array_equal(got.get(), reference((2, 3), 4, 3, [[1], [-2]]))
    out = cp.full((6, 4, 3), 7, dtype=dtype)
    assert eyelike.eye(4, 3, k=ks, batch_shape=6, out=out) is out
    np.testing.assert_array_equal(out.get(), reference((6,), 4, 3, ks))
    view = cp.zeros((6, 8, 3), dtype=dtype)[:, ::2]  # non-contiguous out
    eyelike.eye(4, 3, k=-1, batch_shape=6, out=view)
    np.testing.assert_array_equal(view.get(), reference((6,), 4, 3, -1))


def test_eye_like_and_zero_sizes(cp: Any) -> None:
    x = cp.zeros((2, 4, 4), dtype=cp.float32)
    got = eyelike.eye_like(x, k=1)
    assert got.dtype == cp.float32
    assert got.device == x.device
    np.testing.assert_array_equal(got.get(), reference((2,), 4, 4, 1))
    for shape in [(0, 3), (3, 0), (0, 2, 2)]:
        assert eyelike.eye(*shape[-2:], batch_shape=shape[:-2], xp=cp).shape == shape


def test_non_default_stream(cp: Any) -> None:
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        got = eyelike.eye(64, batch_shape=8, xp=cp, dtype="int32")
    stream.synchronize()
    np.testing.assert_array_equal(got.get(), reference((8,), 64, 64, 0))


def test_second_device(cp: Any) -> None:
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs a second CUDA device")
    got = eyelike.eye(3, xp=cp, device=1)
    assert got.device.id == 1
    with cp.cuda.Device(1):
        x = cp.zeros((3, 3))
    assert eyelike.eye_like(x).device.id == 1


def test_beyond_2_31_elements(cp: Any) -> None:
    free, _ = cp.cuda.runtime.memGetInfo()
    if free < 3 * 2**31:
        pytest.skip("needs ~6 GiB of free GPU memory")
    n = 2**31 + 2**20  # > 2**31 uint8 elements: the 64-bit index path
    got = eyelike.eye(2, n // 2 // 2, batch_shape=2, k=5, dtype="uint8", xp=cp)
    assert int(got.sum()) == 4
    got = eyelike.eye(46341, 46341, dtype="uint8", xp=cp)  # one matrix > 2**31
    assert int(got.sum()) == 46341
    assert int(cp.trace(got)) == 46341
    del got


def test_kernel_cache_built_once_under_threads(cp: Any) -> None:
    from eyelike import _cupy

    _cupy._kernel.cache_clear()
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
    assert _cupy._kernel.cache_info().currsize == 1
