"""16 threads generating at once give exactly the single-threaded results.

Every task runs once on the main thread first (the expected value), then
again from 16 worker threads released together by a barrier, several rounds
each, mixing backends (NumPy, PyTorch, JAX, array-api-strict), dtypes,
shapes (NumPy outs over the backend's threading threshold, 32 MiB, with
short rows are split over its own thread pool too),
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
from conftest import GPU_REASON, HAS_GPU, reference, to_numpy

import eyelike
from eyelike import _args, _core, _numpy

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
        # Outs above the backend's threading threshold, with short rows (a
        # dense diagonal): split over eyelike's own pool.
        Task(
            "np large out (pool, memset)",
            lambda o: eyelike.eye(64, batch_shape=2100, k=-2, out=o),
            lambda: np.full((2100, 64, 64), 9, dtype=np.float32),
        ),
        Task(
            "np large out reversed (pool, zeroing)",
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
    out_c = by_name["np large out (pool, memset)"]
    assert out_c.nbytes >= _numpy._PARALLEL_BYTES  # really takes the pool
    assert _numpy._dense(out_c)
    assert int(np.count_nonzero(out_c)) == 2100 * 62
    assert out_c[-1, 63, 61] == 1
    out_r = by_name["np large out reversed (pool, zeroing)"]
    assert out_r.nbytes >= _numpy._PARALLEL_BYTES
    assert _numpy._dense(out_r)
    assert int(np.count_nonzero(out_r)) == 12000 * 19
    assert out_r[0, 0, 11] == 1
    assert out_r[-1, 18, 29] == 1
    out_t = by_name["np out transposed"]
    assert out_t.shape == (2, 300, 200)
    assert int(np.count_nonzero(out_t)) == 2 * 200


def test_sixteen_threads_numpy() -> None:
    _core._NUMPY_DTYPES.clear()  # the dtype caches fill under contention
    _args._numpy_dtype_checked.cache_clear()
    _run_concurrently(_np_tasks())


def test_sixteen_threads_mixed_backends() -> None:
    tasks = _np_tasks() + _torch_tasks() + _jax_tasks() + _xs_tasks()
    _run_concurrently(tasks)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason=GPU_REASON)
def test_sixteen_threads_with_cupy() -> None:  # pragma: no cover - needs a GPU
    cp = pytest.importorskip("cupy")
    from eyelike import _cupy

    _cupy._kernel.cache_clear()
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
    assert _cupy._kernel.cache_info().currsize <= 4


# ------------------------------------------- the backend's own work queue


def _busy_pool(
    monkeypatch: pytest.MonkeyPatch, release_after: float
) -> concurrent.futures.ThreadPoolExecutor:
    """A one-worker pool whose worker is busy for ``release_after`` seconds."""
    executor = concurrent.futures.ThreadPoolExecutor(1)
    executor.submit(time.sleep, release_after)
    monkeypatch.setattr(_numpy, "_pool", lambda: (executor, 2))
    return executor


def _pooled_out() -> np.ndarray[Any, Any]:
    """An out the backend splits over its pool: 34 MB, rows of 256 bytes."""
    out = np.full((2100, 64, 64), 9, dtype=np.float32)
    assert out.nbytes >= _numpy._PARALLEL_BYTES
    return out


def test_late_worker_leaves_all_parts_to_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A worker that starts late finds its part taken: the caller writes every
    # part and returns without waiting for the busy pool.
    executor = _busy_pool(monkeypatch, 2.0)
    writers: list[str] = []
    real = _numpy._write

    def spy(*args: Any) -> None:
        writers.append(threading.current_thread().name)
        real(*args)

    monkeypatch.setattr(_numpy, "_write", spy)
    start = time.perf_counter()
    a = eyelike.eye(64, batch_shape=2100, k=3, out=_pooled_out())
    assert time.perf_counter() - start < 1.5
    assert writers == [threading.current_thread().name] * 2
    assert int(np.count_nonzero(a)) == 2100 * 61
    assert bool((a[:, np.arange(61), np.arange(3, 64)] == 1).all())
    executor.shutdown(wait=True)
    assert len(writers) == 2  # the dropped job never ran


def test_error_in_a_part_stops_the_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    executor = _busy_pool(monkeypatch, 0.2)
    calls: list[str] = []
    real = _numpy._write

    def failing(*args: Any) -> None:
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            msg = "part 1 failed"
            raise RuntimeError(msg)
        real(*args)

    monkeypatch.setattr(_numpy, "_write", failing)
    with pytest.raises(RuntimeError, match="part 1 failed"):
        eyelike.eye(64, batch_shape=2100, out=_pooled_out())
    executor.shutdown(wait=True)
    assert len(calls) == 1  # not even a late worker took a part after it


def test_error_waits_for_the_part_a_worker_is_writing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Four parts (two matrices, three "cores"), one worker thread: the
    # worker is mid-part when the caller's part fails. The call returns only
    # after that part, and the worker takes no part after the error.
    executor = concurrent.futures.ThreadPoolExecutor(1)
    monkeypatch.setattr(_numpy, "_pool", lambda: (executor, 3))
    worker_started = threading.Event()
    worker_parts: list[float] = []
    caller = threading.current_thread()
    real = _numpy._write

    def spy(*args: Any) -> None:
        if threading.current_thread() is caller:
            assert worker_started.wait(10)
            msg = "caller's part failed"
            raise RuntimeError(msg)
        worker_started.set()
        time.sleep(0.3)  # still writing when the caller fails
        real(*args)
        worker_parts.append(time.perf_counter())

    monkeypatch.setattr(_numpy, "_write", spy)
    out = np.full((2, 300_000, 60), 5, dtype=np.uint8)
    assert len(_numpy._contiguous_parts(out, 3)) == 4
    with pytest.raises(RuntimeError, match="caller's part failed"):
        eyelike.eye(300_000, 60, batch_shape=2, out=out)
    returned = time.perf_counter()
    executor.shutdown(wait=True)
    assert len(worker_parts) == 1
    assert worker_parts[0] <= returned


def test_contiguous_out_with_few_matrices_splits_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Fewer matrices than cores: rows of each matrix, every part contiguous
    # (one memset each), none spanning two matrices.
    executor = concurrent.futures.ThreadPoolExecutor(7)
    monkeypatch.setattr(_numpy, "_pool", lambda: (executor, 8))
    counts: list[int] = []
    real = _numpy._memset

    def spy(address: int, value: int, count: int) -> Any:
        counts.append(count)
        return real(address, value, count)

    monkeypatch.setattr(_numpy, "_memset", spy)
    out = np.full((2, 1, 300_000, 60), 5, dtype=np.uint8)
    eyelike.eye(300_000, 60, batch_shape=(2, 1), k=-7, out=out)
    assert len(counts) == 8
    assert sum(counts) == out.nbytes
    assert int(np.count_nonzero(out)) == 2 * 60
    assert bool((out[:, 0, np.arange(7, 67), np.arange(60)] == 1).all())
    executor.shutdown()
