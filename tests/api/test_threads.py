"""16 threads generating at once give exactly the single-threaded results.

Every task runs once on the main thread first (the expected value), then
again from 16 worker threads released together by a barrier, several rounds
each, mixing backends (NumPy, PyTorch, JAX, array-api-strict), dtypes,
shapes (large NumPy outs, filled by memset or by template copies),
per-matrix offsets and ``out=`` buffers that belong to one thread each.
NumPy results must match bit for bit; the others after ``to_numpy``.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import GPU_REASON, HAS_GPU, reference, to_numpy

import eyelike
from eyelike._validate import dtypes as _dtypes

THREADS = 16
ROUNDS = 2


class Task:
    """One call: ``make_out()`` (per thread) and ``run(out)``."""

    def __init__(
        self,
        name: str,
        run: Callable[[Any], Any],
        make_out: Callable[[], Any] | None = None,
    ) -> None:
        self.name = name
        self.run = run
        self.make_out = make_out or (lambda: None)


def _np_tasks() -> list[Task]:
    import ml_dtypes

    bf16 = np.dtype(ml_dtypes.bfloat16)
    e4m3 = np.dtype(ml_dtypes.float8_e4m3fn)
    big_k = np.array([0, 5, -7, 2**40, -(2**40), 1], dtype=np.int64)
    return [
        Task("np small fast path", lambda o: eyelike.eye(5, 7, k=2, dtype="int8")),
        Task("np small bool", lambda o: eyelike.eye(6, k=-1, dtype=bool)),
        Task(
            "np per-matrix k",
            lambda o: eyelike.eye(9, 11, batch_shape=(2, 3), k=big_k.reshape(2, 3)),
        ),
        Task(
            "np medium bfloat16",
            lambda o: eyelike.eye(1600, 1500, k=7, dtype=bf16),
        ),
        Task(
            "np large uint8",
            lambda o: eyelike.eye(64, 70, batch_shape=(7500,), k=3, dtype="uint8"),
        ),
        Task(
            "np large batch",
            lambda o: eyelike.eye(40, 50, batch_shape=(4, 4200), k=-5, dtype="u1"),
        ),
        # Large outs of small matrices: copies of a template (contiguous), or
        # NumPy's fill then the diagonal (reversed).
        Task(
            "np large out (template)",
            lambda o: eyelike.eye(64, batch_shape=2100, k=-2, out=o),
            lambda: np.full((2100, 64, 64), 9, dtype=np.float32),
        ),
        Task(
            "np large out reversed (fill)",
            lambda o: eyelike.eye(48, 30, batch_shape=12000, k=11, out=o),
            lambda: np.full((12000, 48, 30), 9, dtype=np.uint16)[::-1],
        ),
        Task(
            "np out transposed",
            lambda o: eyelike.eye(300, 200, batch_shape=2, k=-3, out=o),
            lambda: np.full((2, 200, 300), 9, dtype=np.uint16).transpose(0, 2, 1),
        ),
        Task(
            "np out reversed float8",
            lambda o: eyelike.eye(210, 210, k=1, out=o),
            lambda: np.full((210, 210), 3, dtype=e4m3)[::-1],
        ),
        Task(
            "np out per-matrix k",
            lambda o: eyelike.eye(30, 20, batch_shape=4, k=[0, 1, -1, 99], out=o),
            lambda: np.full((4, 30, 20), 5, dtype=np.int32),
        ),
        Task(
            "np eye_like",
            lambda o: eyelike.eye_like(np.empty((3, 110, 130), np.float16), k=2),
        ),
        Task(
            "onnx adapter",
            lambda o: eyelike.onnx.eye_like(np.empty((40, 50), np.int16), k=-2),
        ),
        Task(
            "openvino adapter",
            lambda o: eyelike.openvino.eye(30, 40, 3, [2], output_type="bf16"),
        ),
    ]


def _torch_tasks() -> list[Task]:
    torch = pytest.importorskip("torch")
    return [
        Task(
            "torch bfloat16 batch",
            lambda o: eyelike.eye(
                300, 400, batch_shape=(3,), k=4, xp=torch, dtype=torch.bfloat16
            ),
        ),
        Task(
            "torch per-matrix k",
            lambda o: eyelike.eye(
                20, 30, batch_shape=3, k=torch.tensor([0, -2, 2**40]), xp=torch
            ),
        ),
        Task(
            "torch out strided",
            lambda o: eyelike.eye(64, 32, batch_shape=2, k=-1, out=o),
            lambda: torch.full((2, 32, 128), 7, dtype=torch.int32).transpose(-1, -2)[
                :, ::2, :
            ],
        ),
        Task(
            "torch eye_like",
            lambda o: eyelike.eye_like(torch.empty((2, 50, 60), dtype=torch.float64)),
        ),
    ]


def _jax_tasks() -> list[Task]:
    jnp = pytest.importorskip("jax.numpy")
    return [
        Task(
            "jax per-matrix k float16",
            lambda o: eyelike.eye(
                16, 24, batch_shape=2, k=[3, -(2**40)], xp=jnp, dtype="float16"
            ),
        ),
        Task("jax bool", lambda o: eyelike.eye(33, 17, k=-4, xp=jnp, dtype="bool")),
    ]


def _xs_tasks() -> list[Task]:
    xs = pytest.importorskip("array_api_strict")
    return [
        Task(
            "array_api_strict int16",
            lambda o: eyelike.eye(30, 20, k=-3, xp=xs, dtype="int16"),
        ),
        Task(
            "array_api_strict out",
            lambda o: eyelike.eye(12, 14, batch_shape=2, k=xs.asarray([1, -1]), out=o),
            lambda: xs.full((2, 12, 14), 7.0),
        ),
    ]


def _bits(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return a.view(f"u{a.dtype.itemsize}")  # any strides: same item size


def _same(got: Any, expected: Any) -> bool:
    if isinstance(expected, np.ndarray):
        return (
            type(got) is np.ndarray
            and got.dtype == expected.dtype
            and got.shape == expected.shape
            and bool(np.array_equal(_bits(got), _bits(expected)))
        )
    g, e = to_numpy(got), to_numpy(expected)
    return (
        str(got.dtype) == str(expected.dtype)
        and g.shape == e.shape
        and bool(np.array_equal(g, e))
    )


def _run_concurrently(tasks: list[Task]) -> None:
    expected = [task.run(task.make_out()) for task in tasks]
    barrier = threading.Barrier(THREADS)
    spans: list[tuple[float, float]] = []
    lock = threading.Lock()

    def worker(index: int) -> list[tuple[str, bool]]:
        # Each thread starts at a different task so that all of them are in
        # flight at once; every out buffer is fresh and the thread's own.
        order = [(index + j) % len(tasks) for j in range(len(tasks))]
        barrier.wait()
        done = []
        for _ in range(ROUNDS):
            for i in order:
                out = tasks[i].make_out()
                start = time.perf_counter()
                result = tasks[i].run(out)
                end = time.perf_counter()
                with lock:
                    spans.append((start, end))
                ok = _same(result, expected[i]) and (out is None or result is out)
                done.append((tasks[i].name, ok))
        return done

    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))
    wrong = [name for per_thread in results for name, ok in per_thread if not ok]
    assert not wrong, wrong
    assert sum(len(r) for r in results) == THREADS * ROUNDS * len(tasks)
    # The calls really overlapped: some moment had many of them in flight.
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    live = peak = 0
    for _, step in events:
        live += step
        peak = max(peak, live)
    assert peak >= THREADS // 2


def test_expected_values_are_right() -> None:
    # The single-threaded results the threads are compared with are right.
    tasks = _np_tasks()
    by_name = {t.name: t.run(t.make_out()) for t in tasks}
    np.testing.assert_array_equal(
        by_name["np per-matrix k"],
        reference((2, 3), 9, 11, [[0, 5, -7], [2**40, -(2**40), 1]]),
    )
    large = by_name["np large uint8"]
    assert int(np.count_nonzero(large)) == 7500 * 64
    assert large[0, 0, 3] == 1
    assert large[-1, 63, 66] == 1
    batch = by_name["np large batch"]
    assert int(np.count_nonzero(batch)) == 4 * 4200 * 35
    out_c = by_name["np large out (template)"]
    assert int(np.count_nonzero(out_c)) == 2100 * 62
    assert out_c[-1, 63, 61] == 1
    out_r = by_name["np large out reversed (fill)"]
    assert int(np.count_nonzero(out_r)) == 12000 * 19
    assert out_r[0, 0, 11] == 1
    assert out_r[-1, 18, 29] == 1
    out_t = by_name["np out transposed"]
    assert out_t.shape == (2, 300, 200)
    assert int(np.count_nonzero(out_t)) == 2 * 200


def test_sixteen_threads_numpy() -> None:
    _dtypes._CACHE.clear()  # the dtype cache fills under contention
    _run_concurrently(_np_tasks())


def test_sixteen_threads_mixed_backends() -> None:
    tasks = _np_tasks() + _torch_tasks() + _jax_tasks() + _xs_tasks()
    _run_concurrently(tasks)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason=GPU_REASON)
def test_sixteen_threads_with_cupy() -> None:  # pragma: no cover - needs a GPU
    cp = pytest.importorskip("cupy")
    from eyelike._backends import cupy as cupy_backend

    cupy_backend.kernel.cache_clear()
    tasks = [
        *_np_tasks()[:4],
        Task(
            "cupy per-matrix k",
            lambda o: eyelike.eye(300, 200, batch_shape=3, k=[0, 1, -1], xp=cp),
        ),
        Task(
            "cupy int8 out",
            lambda o: eyelike.eye(500, 400, k=2, out=o),
            lambda: cp.full((500, 400), 7, dtype=cp.int8),
        ),
        Task(
            "cupy bool big",
            lambda o: eyelike.eye(4000, 4000, batch_shape=2, k=-1, xp=cp, dtype=bool),
        ),
    ]
    _run_concurrently(tasks)
    assert cupy_backend.kernel.cache_info().currsize <= 4
