"""The cubed backend: lazy, every task within the Spec's ``allowed_mem``,
each block made by the NumPy backend; checked for values against the
reference, for the Spec it keeps, for the shapes it computes under a small
``allowed_mem`` (every one ``cubed.zeros`` computes), and for laziness at
call time. Skipped where cubed is not installed."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import forbid_building, reference

import eyelike
from eyelike._backends import backend_of_array, backend_of_namespace
from eyelike._backends import cubed as _cubed
from eyelike._backends import numpy as _numpy
from eyelike._backends._base import Build

cubed = pytest.importorskip("cubed")

SHAPES = [(3, 4), (4, 3), (5, 3, 3), (2, 3, 4, 5), (0, 3, 3), (4, 0, 3), (4, 3, 0)]
SHAPES += [(2, 0, 2, 2), (0, 0), (7, 1, 1)]
OFFSETS = [0, 1, -2, 3, 2**63, -(2**63) - 1, 10**30]


@pytest.fixture
def small(tmp_path: Path) -> Iterator[Any]:
    """cubed's config Spec with 20 MB per task (what ``eye`` takes), in
    ``tmp_path``; yields it."""
    settings = {"spec.work_dir": str(tmp_path), "spec.allowed_mem": "20MB"}
    settings["spec.reserved_mem"] = 0
    with cubed.config.set(settings):
        spec = cubed.spec.spec_from_config(cubed.config)
        assert spec.allowed_mem == 20_000_000
        yield spec


def _spec(tmp_path: Path, allowed: str) -> Any:
    return cubed.Spec(work_dir=str(tmp_path), allowed_mem=allowed)


def _check(x: Any, expected: np.ndarray[Any, Any], dtype: Any = None) -> None:
    """A lazy cubed array, regular chunks, and the expected values."""
    assert isinstance(x, cubed.Array)
    assert x.shape == expected.shape
    for dim in x.chunks:
        assert all(c == dim[0] for c in dim[:-1])
        assert dim[-1] <= dim[0]
    got = np.asarray(x.compute())
    if dtype is not None:
        assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------- values


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_scalar_k(shape: tuple[int, ...], small: Any) -> None:
    batch, (n_rows, n_cols) = shape[:-2], shape[-2:]
    for k in OFFSETS:
        x = eyelike.eye(n_rows, n_cols, k=k, batch_shape=batch, dtype="f4", xp=cubed)
        assert x.spec is small
        _check(x, reference(batch, n_rows, n_cols, k), np.float32)


K_ARRAYS = [
    ([0, 1, -1, 4, -9, 2], (6,)),
    (np.array([[1], [-1], [0]], dtype=np.int8), (3, 4)),
    (np.array([2**64 - 1, 0, 1, 2**63], dtype=np.uint64), (2, 4)),
    ([2**63, -(2**63), 10**40], (3,)),
    (np.array(2), (3, 2)),
    (np.arange(24).reshape(2, 3, 4) % 7 - 3, (2, 3, 4)),
]


@pytest.mark.parametrize("chunks", [None, 1, 2], ids=repr)
@pytest.mark.parametrize(("k", "batch"), K_ARRAYS, ids=repr)
def test_per_matrix_k(k: Any, batch: tuple[int, ...], chunks: Any) -> None:
    x = eyelike.eye(3, 4, k=k, batch_shape=batch, dtype="i4", xp=cubed, chunks=chunks)
    _check(x, reference(batch, 3, 4, k), np.int32)


@pytest.mark.parametrize(("k", "batch"), K_ARRAYS[:3] + K_ARRAYS[4:], ids=repr)
def test_per_matrix_k_of_cubed(k: Any, batch: tuple[int, ...], tmp_path: Path) -> None:
    # A cubed k: its Spec is the result's, and it is read by blocks.
    spec = _spec(tmp_path, "100MB")
    kc = cubed.asarray(np.asarray(k), spec=spec)
    x = eyelike.eye(3, 4, k=kc, batch_shape=batch, xp=cubed, chunks=1)
    assert x.spec is spec
    _check(x, reference(batch, 3, 4, np.asarray(k)))


def test_blocks_inside_a_matrix() -> None:
    # The matrix dims chunked too: each block's own diagonal, k + r0 - c0.
    ks = [0, 5, -700, 10**30, -(10**30), 399]
    x = eyelike.eye(1200, 900, k=ks, batch_shape=6, xp=cubed, chunks=(4, 500, 400))
    assert x.chunks == ((4, 2), (500, 500, 200), (400, 400, 100))
    _check(x, _numpy.eye(_build((6, 1200, 900), ks)))
    for k in (-1199, -400, 0, 1, 401, 899):
        x = eyelike.eye(1200, 900, k=k, xp=cubed, chunks=(300, 300), dtype=bool)
        _check(x, np.eye(1200, 900, k=k, dtype=bool), bool)


def _build(shape: tuple[int, ...], k: Any, dtype: Any = "f8") -> Any:
    """The NumPy backend's Build for the oracle of large shapes (the reference
    is Python-object arithmetic, too slow for them)."""
    batch, (n_rows, n_cols) = shape[:-2], shape[-2:]
    clamped = np.asarray(np.clip(np.asarray(k, dtype=object), -n_rows, n_cols))
    clamped = clamped.astype(np.int64)
    return Build(shape, np.broadcast_to(clamped, batch), np.dtype(dtype))


@pytest.mark.parametrize(
    "dtype",
    [
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
        "uint64", "float16", "float32", "float64", "complex64", "complex128",
    ],
)  # fmt: skip
def test_every_dtype(dtype: str) -> None:
    x = eyelike.eye(3, 4, k=-1, batch_shape=(5,), dtype=dtype, xp=cubed, chunks=2)
    _check(x, reference((5,), 3, 4, -1), dtype)
    x = eyelike.eye(3, 4, k=[0, 1], batch_shape=(2,), dtype=dtype, xp=cubed)
    _check(x, reference((2,), 3, 4, [0, 1]), dtype)


def test_default_dtype_and_ml_dtypes_refused() -> None:
    _check(eyelike.eye(2, xp=cubed), np.eye(2), np.float64)
    pytest.importorskip("ml_dtypes")
    with pytest.raises(eyelike.DTypeError, match="dtype bfloat16 is not one cubed"):
        eyelike.eye(2, dtype="bfloat16", xp=cubed)


def test_both_namespaces(tmp_path: Path) -> None:
    import array_api_compat

    x = cubed.ones((2, 3, 3), spec=_spec(tmp_path, "100MB"))
    assert array_api_compat.array_namespace(x) is cubed
    backend = backend_of_namespace(cubed)
    assert backend_of_namespace(cubed.array_api) is backend
    assert backend_of_array(x) is backend
    for xp in (cubed, cubed.array_api):
        _check(eyelike.eye(3, k=1, xp=xp), np.eye(3, k=1))


def test_device() -> None:
    _check(eyelike.eye(2, device="cpu", xp=cubed), np.eye(2))
    with pytest.raises(ValueError, match="device must be None or 'cpu' for cubed"):
        eyelike.eye(2, device="cuda", xp=cubed)


# ---------------------------------------------------------------- the Spec


def test_eye_like_keeps_the_spec_and_chunks(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "100MB")
    x = cubed.ones((6, 4, 5), chunks=(2, 4, 5), spec=spec, dtype="i2")
    for k in (1, [0, 1, -1, 2, 9, -9]):
        y = eyelike.eye_like(x, k=k)
        assert y.spec is spec
        assert y.chunks == x.chunks
        assert y.dtype == x.dtype
        _check(x + y, 1 + reference((6,), 4, 5, k))


def test_eye_like_of_a_chunk_too_large_for_a_task(tmp_path: Path) -> None:
    # cubed.zeros keeps one 128 MiB chunk, which no task under 20 MB may
    # write: the result takes chunks that fit (and x + y computes too).
    spec = _spec(tmp_path, "20MB")
    x = cubed.zeros((64, 512, 512), spec=spec)
    assert x.chunks[0] == (64,)
    k = np.arange(64) * 37 % 1100 - 550
    y = eyelike.eye_like(x, k=k)
    assert y.spec is spec
    assert _cubed.fits(spec, y.chunksize, 8, per_matrix_k=True)
    expected = _numpy.eye(_build((64, 512, 512), k))
    _check(y, expected)
    _check(y * 2, expected * 2)


def test_spec_of_k_against_x(tmp_path: Path) -> None:
    x = cubed.ones((2, 3, 3), spec=_spec(tmp_path / "a", "100MB"))
    k = cubed.asarray(np.array([0, 1]), spec=_spec(tmp_path / "b", "50MB"))
    with pytest.raises(ValueError, match="k's Spec"):
        eyelike.eye_like(x, k=k)


ZEROS_SHAPES = [
    ((64, 512, 512), "f8"),  # 128 MiB, whole matrices in chunks of 2
    ((2, 1800, 1700), "f8"),  # one matrix beyond a task: split
    ((3000, 3000), "c16"),  # one matrix, 144 MB
    ((40000, 3, 3), "bool"),  # k is 8 bytes a matrix, the eye 9
    ((4, 5, 6, 7), "i1"),
]


@pytest.mark.parametrize(("shape", "dtype"), ZEROS_SHAPES, ids=str)
def test_what_zeros_computes_computes_here(
    shape: tuple[int, ...], dtype: str, small: Any
) -> None:
    """Under 20 MB a task: every shape here ``cubed.zeros`` computes, and
    so does the eye (one k, and one per matrix), and an op on it."""
    assert cubed.zeros(shape, dtype=dtype).compute().shape == shape
    batch, (n_rows, n_cols) = shape[:-2], shape[-2:]
    ks: list[Any] = [3]
    if batch:
        ks.append((np.arange(math.prod(batch)).reshape(batch) * 7 % 900 - 450).tolist())
    for k in ks:
        x = eyelike.eye(n_rows, n_cols, k=k, batch_shape=batch, dtype=dtype, xp=cubed)
        assert x.spec is small
        per_matrix = not isinstance(k, int)
        assert _cubed.fits(small, x.chunksize, x.dtype.itemsize, per_matrix)
        expected = _numpy.eye(_build(shape, k, dtype))
        _check(x, expected, dtype)
        # An element-wise op on it fits a task too.
        op = cubed.logical_not(x) if dtype == "bool" else x * 2
        _check(op, ~expected if dtype == "bool" else expected * 2)


# ---------------------------------------------------------------- chunks=


@pytest.mark.parametrize(
    ("chunks", "want"),
    [
        (2, ((2, 2, 1), (2, 1), (4,), (5,))),
        ((2, -1), ((2, 2, 1), (3,), (4,), (5,))),
        ({0: 1}, ((1,) * 5, (3,), (4,), (5,))),
        ({-1: 2, 0: 3}, ((3, 2), (3,), (4,), (2, 2, 1))),
        ((5, 3, 2, 5), ((5,), (3,), (2, 2), (5,))),
        ("auto", ((5,), (3,), (4,), (5,))),
        ("240B", ((1,) * 5, (1,) * 3, (4,), (5,))),
    ],
    ids=repr,
)
def test_chunks(chunks: Any, want: Any) -> None:
    k = [[0, 1, -1], [2, 5, -4], [1, 1, 1], [0, 0, 0], [-3, 3, 4]]
    x = eyelike.eye(4, 5, k=k, batch_shape=(5, 3), xp=cubed, chunks=chunks)
    assert x.chunks == want
    _check(x, reference((5, 3), 4, 5, k))


@pytest.mark.parametrize(
    ("chunks", "words"),
    [
        (True, "a bool is not a chunk size"),
        ((1, 2, 3), "expected 2 entries"),
        (-2, "a chunk size is a positive int"),
        ({5: 1}, "axis 5 is not one of its 4 dimensions"),
        (((2, 3), -1), "cubed's chunks are regular"),
        (((1, 1), -1), "is not a chunking"),
        ("lots", "is not a chunking for cubed"),
    ],
    ids=repr,
)
def test_bad_chunks(chunks: Any, words: str) -> None:
    with pytest.raises(ValueError, match="chunks=") as info:
        eyelike.eye(4, 5, batch_shape=(5, 3), xp=cubed, chunks=chunks)
    assert words in str(info.value)


# ---------------------------------------------------------------- refusals, laziness


def test_out_and_order_refused_before_building(monkeypatch: pytest.MonkeyPatch) -> None:
    out = cubed.ones((2, 3, 3))
    forbid_building(monkeypatch, _cubed.CubedBackend, "eye")
    with pytest.raises(TypeError, match="out: cubed arrays are immutable"):
        eyelike.eye(3, batch_shape=2, out=out)
    with pytest.raises(TypeError, match="out: cubed arrays are immutable"):
        eyelike.eye_like(out, out=out)
    with pytest.raises(TypeError, match="order is for namespaces with a memory order"):
        eyelike.eye(3, xp=cubed, order="F")
    np.testing.assert_array_equal(out.compute(), np.ones((2, 3, 3)))


def test_nothing_runs_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """No block is made at call time, even of an output far larger than
    this machine's memory (the engine bounds memory, task by task)."""
    made: list[tuple[int, ...]] = []
    real = _numpy.eye

    def counting(build: Any) -> Any:
        made.append(build.shape)
        return real(build)

    monkeypatch.setattr(_numpy, "eye", counting)
    huge = eyelike.eye(10**5, k=[1, 2], batch_shape=(10**4, 2), xp=cubed)
    assert huge.shape == (10**4, 2, 10**5, 10**5)  # 1.6 PB: refused by no check
    x = eyelike.eye(4, k=[1, 2, 3], batch_shape=3, xp=cubed, chunks=1)
    assert not made
    _check(x, reference((3,), 4, 4, [1, 2, 3]))
    assert sorted(made) == [(1, 4, 4)] * 3
