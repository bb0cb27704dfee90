"""The Dask backend: lazy, chunked along the batch dimensions, each chunk made
by the NumPy (or CuPy) backend; checked for parity, for laziness at call time
(a lazy backend is tested as lazy: nothing is computed by the call), and on a real
``dask.distributed`` cluster of two worker processes with a memory limit far
below the size of the array."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers import GPU_REASON, HAS_GPU, reference

import eyelike
from eyelike._backends import backend_of_array, backend_of_namespace
from eyelike._backends import dask as _dask
from eyelike._backends._base import Build

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

SHAPES = [(3, 4), (4, 3), (5, 3, 3), (2, 3, 4, 5), (0, 3, 3), (4, 0, 3), (4, 3, 0)]
SHAPES += [(2, 0, 2, 2), (0, 0), (7, 1, 1)]
OFFSETS = [0, 1, -2, 3, 2**63, -(2**63) - 1, 10**30]
CHUNKS = [None, 1, 2, "auto", -1, "256B"]


class CountingScheduler:
    """A Dask scheduler that counts its calls; with ``fail`` it refuses to run.

    Under ``dask.config.set(scheduler=...)`` every compute goes through it,
    so a count of 0 after a call proves the call computed nothing.
    """

    def __init__(self, *, fail: bool = False) -> None:
        self.count = 0
        self.fail = fail

    def __call__(self, dsk: Any, keys: Any, **kwargs: Any) -> Any:
        self.count += 1
        if self.fail:
            msg = "the graph was computed at call time"
            raise AssertionError(msg)
        return dask.get(dsk, keys, **kwargs)


def _compute_once(x: Any) -> np.ndarray[Any, Any]:
    """Compute ``x`` with one (and only one) run of the scheduler."""
    counter = CountingScheduler()
    with dask.config.set(scheduler=counter):
        got = np.asarray(x.compute())
    assert counter.count == 1
    return got


def _lazy(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` where any compute raises, and check the result's form."""
    with dask.config.set(scheduler=CountingScheduler(fail=True)):
        result = fn(*args, **kwargs)
    assert isinstance(result, da.Array)
    return result


def _check_form(x: Any, shape: tuple[int, ...], dtype: Any) -> None:
    """Shape, dtype, a NumPy meta, and whole matrices in every chunk."""
    assert x.shape == shape
    assert x.dtype == np.dtype(dtype)
    assert type(x._meta) is np.ndarray
    assert x._meta.dtype == np.dtype(dtype)
    assert x._meta.ndim == len(shape)
    assert x.chunks[-2:] == ((shape[-2],), (shape[-1],))


# ---------------------------------------------------------------- parity


@pytest.mark.parametrize("chunks", CHUNKS, ids=repr)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_parity_with_numpy(shape: tuple[int, ...], chunks: Any) -> None:
    batch, (n_rows, n_cols) = shape[:-2], shape[-2:]
    for k in OFFSETS:
        x = _lazy(
            eyelike.eye,
            n_rows,
            n_cols,
            k=k,
            batch_shape=batch,
            dtype="float32",
            xp=da,
            chunks=chunks,
        )
        _check_form(x, shape, np.float32)
        expected = eyelike.eye(n_rows, n_cols, k=k, batch_shape=batch, dtype="f4")
        got = _compute_once(x)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(got, reference(batch, n_rows, n_cols, k))


@pytest.mark.parametrize(
    "dtype",
    [
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
        "uint64", "float16", "float32", "float64", "complex64", "complex128",
    ],
)  # fmt: skip
def test_every_dtype(dtype: str) -> None:
    x = _lazy(eyelike.eye, 3, 4, k=-1, batch_shape=(5,), dtype=dtype, xp=da, chunks=2)
    _check_form(x, (5, 3, 4), dtype)
    got = _compute_once(x)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, reference((5,), 3, 4, -1))


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_ml_dtypes(name: str) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = _lazy(eyelike.eye, 3, k=1, batch_shape=(4,), dtype=name, xp=da, chunks=3)
    assert x.dtype == np.dtype(getattr(ml_dtypes, name))
    got = _compute_once(x).astype(np.float32)
    np.testing.assert_array_equal(got, reference((4,), 3, 3, 1))


def test_default_dtype_is_float64() -> None:
    x = _lazy(eyelike.eye, 2, xp=da)
    _check_form(x, (2, 2), np.float64)
    np.testing.assert_array_equal(_compute_once(x), np.eye(2))


# ---------------------------------------------------------------- per-matrix k

K_ARRAYS = [
    ([0, 1, -1, 4, -9, 2], (6,)),
    (np.array([[1], [-1], [0]], dtype=np.int8), (3, 4)),
    (np.array([2**64 - 1, 0, 1, 2**63], dtype=np.uint64), (2, 4)),
    ([2**63, -(2**63), 10**40], (3,)),
    (np.array(2), (3, 2)),
    (np.arange(24).reshape(2, 3, 4) % 7 - 3, (2, 3, 4)),
]


@pytest.mark.parametrize("chunks", [None, 1, 2, -1], ids=repr)
@pytest.mark.parametrize(("k", "batch"), K_ARRAYS, ids=repr)
def test_per_matrix_k_host(k: Any, batch: tuple[int, ...], chunks: Any) -> None:
    x = _lazy(
        eyelike.eye, 3, 4, k=k, batch_shape=batch, dtype="int32", xp=da, chunks=chunks
    )
    _check_form(x, (*batch, 3, 4), np.int32)
    expected = reference(batch, 3, 4, np.asarray(k, dtype=object).tolist())
    np.testing.assert_array_equal(_compute_once(x), expected)


@pytest.mark.parametrize("k_chunks", [1, 2, 5, -1])
@pytest.mark.parametrize("out_chunks", [1, 3, -1])
def test_per_matrix_k_dask(k_chunks: int, out_chunks: int) -> None:
    """A Dask ``k`` is rechunked to the output's batch chunks (lazily)."""
    k_host = np.arange(-5, 5) * 3
    k = da.from_array(k_host, chunks=k_chunks)
    x = _lazy(
        eyelike.eye, 4, 5, k=k, batch_shape=(2, 10), xp=da, chunks=(1, out_chunks)
    )
    _check_form(x, (2, 10, 4, 5), np.float64)
    np.testing.assert_array_equal(
        _compute_once(x), reference((2, 10), 4, 5, k_host.tolist())
    )


def test_per_matrix_k_dask_broadcast_and_0d() -> None:
    k_col = da.from_array(np.array([[3], [-1], [0]], dtype=np.int16), chunks=1)
    x = _lazy(eyelike.eye, 3, k=k_col, batch_shape=(3, 4), xp=da, chunks=(2, 3))
    np.testing.assert_array_equal(
        _compute_once(x), reference((3, 4), 3, 3, [[3], [-1], [0]])
    )
    k0 = da.from_array(np.array(-2, dtype=np.int8))
    x = _lazy(eyelike.eye, 3, k=k0, batch_shape=(5,), xp=da, chunks=2)
    np.testing.assert_array_equal(_compute_once(x), reference((5,), 3, 3, -2))


def test_per_matrix_k_dask_uint64_and_zero_size() -> None:
    k = da.from_array(np.array([2**64 - 1, 1, 0], dtype=np.uint64), chunks=2)
    x = _lazy(eyelike.eye, 2, 3, k=k, batch_shape=3, xp=da, chunks=1)
    expected = reference((3,), 2, 3, [2**64 - 1, 1, 0])
    np.testing.assert_array_equal(_compute_once(x), expected)
    k = da.zeros((0,), dtype=np.int64)
    x = _lazy(eyelike.eye, 2, 3, k=k, batch_shape=(4, 0), xp=da)
    assert _compute_once(x).shape == (4, 0, 2, 3)


# ---------------------------------------------------------------- eye_like


@pytest.mark.parametrize(
    ("shape", "x_chunks"),
    [
        ((6, 3, 4), (2, 3, 4)),
        ((6, 3, 4), (4, 1, 2)),  # matrix dims split in x: whole in the result
        ((2, 5, 4, 4), (1, 2, 3, 1)),
        ((4, 4), (2, 3)),
        ((0, 2, 2), (1, 1, 1)),
    ],
    ids=str,
)
def test_eye_like_keeps_batch_chunks(
    shape: tuple[int, ...], x_chunks: tuple[int, ...]
) -> None:
    x = da.ones(shape, chunks=x_chunks, dtype=np.int16)
    result = _lazy(eyelike.eye_like, x, k=1)
    _check_form(result, shape, np.int16)
    assert result.chunks[:-2] == x.chunks[:-2]
    batch, (n_rows, n_cols) = shape[:-2], shape[-2:]
    np.testing.assert_array_equal(
        _compute_once(result), reference(batch, n_rows, n_cols, 1)
    )


def test_eye_like_dtype_and_k_arrays() -> None:
    x = da.zeros((4, 6, 3, 3), chunks=(3, 4, 3, 3), dtype=np.float32)
    k_host = (np.arange(24).reshape(4, 6) % 5) - 2
    cases = [
        (k_host, k_host),
        (da.from_array(k_host, chunks=(1, 6)), k_host),
        (k_host[0], k_host[0]),  # broadcast along the first batch dim
        (da.from_array(k_host[:, :1], chunks=(2, 1)), k_host[:, :1]),
    ]
    for k, k_expected in cases:
        result = _lazy(eyelike.eye_like, x, k=k, dtype="uint8")
        _check_form(result, x.shape, np.uint8)
        assert result.chunks == x.chunks
        expected = reference((4, 6), 3, 3, k_expected.tolist())
        np.testing.assert_array_equal(_compute_once(result), expected)


# ---------------------------------------------------------------- chunks=


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        (2, ((2, 2, 1), (2, 2))),
        ((2, 3), ((2, 2, 1), (3, 1))),
        (((1, 4), (4,)), ((1, 4), (4,))),
        ((-1, None), ((5,), (4,))),
        ({0: 3}, ((3, 2), (4,))),
        ({-1: 1, 0: -1}, ((5,), (1, 1, 1, 1))),
        ((2, 2, 3, 3), ((2, 2, 1), (2, 2))),  # the whole shape, matrices whole
        ((2, 2, -1, None), ((2, 2, 1), (2, 2))),
        ("auto", ((5,), (4,))),
    ],
    ids=repr,
)
def test_chunks_forms(chunks: Any, expected: Any) -> None:
    x = _lazy(eyelike.eye, 3, batch_shape=(5, 4), xp=da, chunks=chunks)
    assert x.chunks == (*expected, (3,), (3,))
    np.testing.assert_array_equal(_compute_once(x), reference((5, 4), 3, 3, 0))


def test_default_chunks_follow_dask_config() -> None:
    with dask.config.set({"array.chunk-size": "1MiB"}):
        x = _lazy(eyelike.eye, 64, batch_shape=(1000,), dtype="float32", xp=da)
    matrix = 64 * 64 * 4
    assert x.chunks[0][0] == 2**20 // matrix  # 64 whole matrices per chunk
    assert sum(x.chunks[0]) == 1000
    with dask.config.set({"array.chunk-size": "128MiB"}):
        x = _lazy(eyelike.eye, 64, batch_shape=(1000,), dtype="float32", xp=da)
    assert x.chunks[0] == (1000,)


def test_matrix_larger_than_chunk_size_stays_whole() -> None:
    x = _lazy(eyelike.eye, 300, batch_shape=(3,), xp=da, chunks="1KiB")
    assert x.chunks == ((1, 1, 1), (300,), (300,))


class _RefusesIndex:
    def __index__(self) -> int:
        msg = "only integer tensors can be converted to an index"
        raise TypeError(msg)


@pytest.mark.parametrize(
    ("chunks", "match"),
    [
        ((2,), "expected 2 entries"),
        ((1, 2, 3), "expected 2 entries"),
        ((2, 2, 1, 3), "matrix dimensions would be split"),
        ({2: 1}, "axis 2 is not one of the 2 batch dimensions"),
        ({-3: 1}, "axis -3"),
        # An axis whose __index__ refuses (as a float tensor's does).
        ({_RefusesIndex(): 1}, "is not one of the 2 batch dimensions"),
        (True, "bool"),
        ((2, False), "bool"),
        (0, "chunks=0"),
        ("lots", "chunks='lots'"),
        (((1, 1), 4), "chunks="),
        ((2.5, 1), "chunks="),
        # Bug: negative sizes Dask's normaliser passes through, accepted
        # until .compute() failed inside a task.
        (-5, r"chunks=-5 .*a chunk size is a positive int, or -1"),
        ({0: -3}, r"chunks=\{0: -3\} .*a chunk size is a positive int"),
        ((-2, 2), "a chunk size is a positive int"),
        ({1: -7}, "a chunk size is a positive int"),
    ],
    ids=repr,
)
def test_bad_chunks(chunks: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        eyelike.eye(3, batch_shape=(5, 4), xp=da, chunks=chunks)


def _nested(depth: int) -> Any:
    value: Any = 2
    for _ in range(depth):
        value = [value]
    return value


def test_deep_or_self_holding_chunks_refused() -> None:
    """Bug (review): chunks nested thousands of lists deep, or holding
    itself, raised RecursionError while looking for bools in it."""
    looped: list[Any] = []
    looped.append(looped)
    holder: dict[int, Any] = {}
    holder[0] = holder
    for chunks in (_nested(5000), looped, holder):
        with pytest.raises(ValueError, match="nests more than 3 levels deep"):
            eyelike.eye(3, batch_shape=(5, 4), xp=da, chunks=chunks)


def test_chunks_only_for_dask() -> None:
    strict = pytest.importorskip("array_api_strict")
    with pytest.raises(TypeError, match="chunks is for Dask and Cubed only"):
        eyelike.eye(3, chunks=2, xp=strict)


# ---------------------------------------------------------------- laziness


def test_nothing_runs_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """No compute, and ``meta`` is given: no chunk is made until compute."""
    calls: list[tuple[int, ...]] = []
    block = _dask.block

    def spy(chunk_shape: tuple[int, ...], k: Any, **kwargs: Any) -> Any:
        calls.append(chunk_shape)
        return block(chunk_shape, k, **kwargs)

    monkeypatch.setattr(_dask, "block", spy)
    k = da.from_array(np.arange(12) % 4, chunks=5)
    x = _lazy(eyelike.eye, 3, k=k, batch_shape=(12,), dtype="int8", xp=da, chunks=4)
    y = _lazy(eyelike.eye_like, x, k=np.arange(12) - 6)
    z = _lazy(eyelike.eye, 3, batch_shape=(12,), dtype="int8", xp=da, chunks=4)
    assert calls == []
    for result in (x, y, z):
        _check_form(result, (12, 3, 3), np.int8)
    _compute_once(x)
    assert sorted(calls) == [(4, 3, 3)] * 3


def test_huge_output_builds_no_per_chunk_tasks() -> None:
    """Seven TiB in 62,500 chunks: built at once, nothing materialised."""
    x = _lazy(eyelike.eye, 1000, batch_shape=(10**6,), xp=da)
    assert x.nbytes == 8 * 10**12
    assert x.numblocks == (62500, 1, 1)
    assert x.chunks[-2:] == ((1000,), (1000,))
    layer = x.dask.layers[x.name]
    assert not layer.is_materialized()
    # One small slice of it computes only the chunk it needs.
    np.testing.assert_array_equal(_compute_once(x[123456, :3, :4]), np.eye(3, 4))


def test_same_call_same_graph() -> None:
    a = eyelike.eye(3, k=np.arange(4), batch_shape=4, xp=da, chunks=2)
    b = eyelike.eye(3, k=np.arange(4), batch_shape=4, xp=da, chunks=2)
    c = eyelike.eye(3, k=np.arange(4) + 1, batch_shape=4, xp=da, chunks=2)
    assert a.name == b.name != c.name


# ---------------------------------------------------------------- namespaces


def test_array_api_compat_dask_namespace() -> None:
    compat_da = pytest.importorskip("array_api_compat.dask.array")
    assert backend_of_namespace(da).name == "dask"
    assert backend_of_namespace(compat_da) is backend_of_namespace(da)
    for xp in (da, compat_da):
        x = _lazy(eyelike.eye, 2, 3, k=[1, -1], batch_shape=2, xp=xp, chunks=1)
        assert backend_of_array(x).name == "dask"
        np.testing.assert_array_equal(_compute_once(x), reference((2,), 2, 3, [1, -1]))


def test_cupy_chunks_need_cupy_dtypes() -> None:
    with (
        dask.config.set({"array.backend": "cupy"}),
        pytest.raises(TypeError, match="not supported by CuPy"),
    ):
        _dask.DaskBackend().eye(Build((2, 2), 0, np.dtype("float8_e4m3fn"), None, None))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason=GPU_REASON)
def test_cupy_chunks_on_gpu() -> None:
    cp = pytest.importorskip("cupy")
    x = da.from_array(cp.zeros((6, 3, 4), dtype=cp.float32), chunks=(4, 3, 4))
    for k in (1, np.arange(6) - 3, da.from_array(cp.arange(6) - 3, chunks=2)):
        result = _lazy(eyelike.eye_like, x, k=k)
        assert isinstance(result._meta, cp.ndarray)
        assert result.chunks == x.chunks
        got = result.compute()
        assert isinstance(got, cp.ndarray)
        ks = 1 if isinstance(k, int) else list(range(-3, 3))
        np.testing.assert_array_equal(got.get(), reference((6,), 3, 4, ks))
    with dask.config.set({"array.backend": "cupy"}):
        y = _lazy(eyelike.eye, 3, batch_shape=(5,), dtype="int8", xp=da, chunks=2)
    assert isinstance(y._meta, cp.ndarray)
    np.testing.assert_array_equal(y.compute().get(), reference((5,), 3, 3, 0))


# ---------------------------------------------------------------- distributed

MEMORY_LIMIT = 600 * 2**20  # per worker
BATCH, SIZE = 32768, 128  # float32: 32768 * 128 * 128 * 4 B = 2 GiB in all
CHUNK = "64MiB"  # 1024 matrices per chunk, 32 chunks


@pytest.fixture
def client() -> Iterator[Any]:
    """Two worker processes on loopback, one thread each, 600 MiB apiece."""
    distributed = pytest.importorskip("distributed")
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit=MEMORY_LIMIT,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.wait_for_workers(2)
        yield client


def _workers(client: Any) -> dict[str, int]:
    """Worker address -> process id: both change if a worker restarts."""
    pids: dict[str, int] = client.run(os.getpid)
    assert set(pids) == set(client.scheduler_info()["workers"])
    return pids


def test_distributed_2gib_in_chunks_under_memory_limit(client: Any) -> None:
    """A 2 GiB batch (over 3x a worker's memory limit) reduced on the cluster."""
    before = _workers(client)
    assert len(before) == 2
    k = (np.arange(BATCH) % 301) - 150  # offsets -150..150: some all-zero
    x = _lazy(eyelike.eye, SIZE, batch_shape=BATCH, k=k, dtype="float32", xp=da)
    with dask.config.set({"array.chunk-size": CHUNK}):
        y = _lazy(eyelike.eye, SIZE, batch_shape=BATCH, k=k, dtype="float32", xp=da)
    for arr in (x, y):
        assert arr.nbytes == 2 * 2**30 > 3 * MEMORY_LIMIT
    assert max(y.chunks[0]) * SIZE * SIZE * 4 == 64 * 2**20 < MEMORY_LIMIT // 8
    assert y.numblocks == (32, 1, 1)

    # Only these reductions come back to the client: 8 B and 256 KiB.
    ones = da.count_nonzero(y)
    per_matrix = y.sum(axis=(-2, -1), dtype=np.int64)
    trace = da.diagonal(y, axis1=-2, axis2=-1).sum(axis=-1, dtype=np.int64)
    got_ones, got_per_matrix, got_trace = client.compute(
        [ones, per_matrix, trace], sync=True
    )

    expected = np.maximum(0, SIZE - np.abs(k))
    assert int(got_ones) == int(expected.sum()) == 1_785_685
    np.testing.assert_array_equal(got_per_matrix, expected)
    np.testing.assert_array_equal(got_trace, (k == 0) * SIZE)
    assert _workers(client) == before  # no worker restarted


def test_distributed_one_big_chunk_breaks_the_limit(client: Any) -> None:
    """The control: the same 2 GiB as one chunk is too much for a worker."""
    distributed = pytest.importorskip("distributed")
    x = eyelike.eye(SIZE, batch_shape=BATCH, dtype="float32", xp=da, chunks=-1)
    assert x.numblocks == (1, 1, 1)
    with pytest.raises(distributed.KilledWorker):
        client.compute(da.count_nonzero(x), sync=True)
    assert math.prod(x.shape) * 4 > 3 * MEMORY_LIMIT


# ------------------------------------------------- unknown chunk sizes


def _unknown_sizes(a: Any) -> Any:
    """``a`` filtered along its first axis by an all-true mask: the same
    values, but Dask no longer knows the chunk sizes (nan)."""
    first = a if a.ndim == 1 else a[(slice(None), *(0,) * (a.ndim - 1))]
    return a[first == first]


def test_k_of_unknown_chunk_sizes_is_refused_by_name() -> None:
    # Was an uncaught TypeError ('float' object cannot be interpreted as an
    # integer) from the broadcast check.
    k = _unknown_sizes(da.from_array(np.arange(20) % 3 - 1, chunks=5))
    assert math.isnan(k.shape[0])
    with pytest.raises(
        ValueError, match=r"k must have a known shape.*compute_chunk_sizes"
    ):
        eyelike.eye(4, batch_shape=20, xp=da, k=k)
    k.compute_chunk_sizes()
    x = eyelike.eye(4, batch_shape=20, xp=da, k=k)
    np.testing.assert_array_equal(
        _compute_once(x), reference((20,), 4, 4, (np.arange(20) % 3 - 1).tolist())
    )


def test_x_of_unknown_chunk_sizes_is_refused_by_name() -> None:
    x = _unknown_sizes(da.zeros((6, 3, 3), chunks=2))
    with pytest.raises(
        ValueError, match=r"x must have a known shape.*compute_chunk_sizes"
    ):
        eyelike.eye_like(x)


@pytest.mark.parametrize("batch", [10**12, (2**40, 0)])
def test_more_chunks_than_memory_lists_are_refused_naming_chunks(batch: Any) -> None:
    """Bug (a review of issue 44's third round): chunks=1 over a batch of
    10**12 matrices (or of 2**40 beside a 0) raised a bare MemoryError()
    from Dask's list of the chunks, naming nothing. A ValueError naming
    chunks, before any graph is built."""
    with pytest.raises(ValueError, match=r"chunks=1 .*more chunks than memory"):
        eyelike.eye(2, batch_shape=batch, xp=da, chunks=1)
