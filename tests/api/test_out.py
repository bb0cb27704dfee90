"""``out=``: bit-for-bit untouched on every failure path; strided, reversed,
transposed and overlapping views filled exactly, nothing outside them touched.

Every success check compares with ``reference`` (the rule evaluated with
Python ints); every "outside the view" check marks the view's elements in a
boolean mask built by the *same* indexing function, so an element the
library wrote outside the view shows up as a changed byte.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import reference, to_numpy
from numpy.lib.stride_tricks import as_strided

import eyelike
from eyelike import eye, eye_like

View = Callable[[Any], Any]
ALLOWED = (TypeError, ValueError, MemoryError)


def _pattern(shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
    """A buffer whose every element differs from 0 and 1 (where it can)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.random.default_rng(7).integers(0, 2, size=shape).astype(bool)
    a = np.full(shape, 7, dtype=dt)
    a.reshape(-1)[::5] = 3
    return a


def _buffer() -> np.ndarray[Any, Any]:
    """A float64 out of shape (2, 3, 3) with NaN, -0.0 and inf in it."""
    out = np.arange(18, dtype=np.float64).reshape(2, 3, 3) + 0.5
    out[0, 0, 0] = np.nan
    out[0, 1, 1] = -0.0
    out[1, 2, 2] = -np.inf
    return out


def _torch() -> Any:
    return pytest.importorskip("torch")


# -------------------------------------------------------------- failure paths


def _read_only() -> np.ndarray[Any, Any]:
    out = _buffer()
    out.flags.writeable = False
    return out


# (id, out factory, call taking out, words the message must contain)
Failure = tuple[str, Callable[[], Any], Callable[[Any], Any], tuple[str, ...]]
NUMPY_FAILURES: list[Failure] = [
    ("k float", _buffer, lambda o: eye(3, batch_shape=2, k=1.5, out=o), ("k",)),
    ("k bool", _buffer, lambda o: eye(3, batch_shape=2, k=True, out=o), ("k",)),
    ("k str", _buffer, lambda o: eye(3, batch_shape=2, k="1", out=o), ("k",)),
    ("k None", _buffer, lambda o: eye(3, batch_shape=2, k=None, out=o), ("k",)),
    (
        "k too long",
        _buffer,
        lambda o: eye(3, batch_shape=2, k=[0, 1, 2], out=o),
        ("k", "(3,)"),
    ),
    (
        "k float array",
        _buffer,
        lambda o: eye(3, batch_shape=2, k=np.array([0.0, 1.0]), out=o),
        ("k",),
    ),
    (
        "k bool list",
        _buffer,
        lambda o: eye(3, batch_shape=2, k=[True, False], out=o),
        ("k",),
    ),
    (
        "k ragged",
        _buffer,
        lambda o: eye(3, batch_shape=2, k=[0, [1, 2]], out=o),
        ("k",),
    ),
    (
        "dtype mismatch",
        _buffer,
        lambda o: eye(3, batch_shape=2, dtype="int8", out=o),
        ("out", "int8"),
    ),
    (
        "dtype unknown",
        _buffer,
        lambda o: eye(3, batch_shape=2, dtype="foo", out=o),
        ("dtype",),
    ),
    (
        "dtype object",
        _buffer,
        lambda o: eye(3, batch_shape=2, dtype=object, out=o),
        ("dtype",),
    ),
    (
        "dtype no zero",
        _buffer,
        lambda o: eye(3, batch_shape=2, dtype="float8_e8m0fnu", out=o),
        ("float8_e8m0fnu",),
    ),
    (
        "n_cols",
        _buffer,
        lambda o: eye(3, 4, batch_shape=2, out=o),
        ("out", "(2, 3, 4)"),
    ),
    ("n_cols neg", _buffer, lambda o: eye(3, -1, batch_shape=2, out=o), ("n_cols",)),
    ("n_cols float", _buffer, lambda o: eye(3, 2.5, batch_shape=2, out=o), ("n_cols",)),
    ("n_rows bool", _buffer, lambda o: eye(True, batch_shape=2, out=o), ("n_rows",)),
    ("n_rows big", _buffer, lambda o: eye(2**63, batch_shape=2, out=o), ("n_rows",)),
    ("batch shape", _buffer, lambda o: eye(3, batch_shape=3, out=o), ("out",)),
    (
        "batch neg",
        _buffer,
        lambda o: eye(3, batch_shape=(-2,), out=o),
        ("batch_shape",),
    ),
    ("batch str", _buffer, lambda o: eye(3, batch_shape="2", out=o), ("batch_shape",)),
    (
        "batch float",
        _buffer,
        lambda o: eye(3, batch_shape=(2.0,), out=o),
        ("batch_shape",),
    ),
    (
        "batch None",
        _buffer,
        lambda o: eye(3, batch_shape=None, out=o),
        ("batch_shape",),
    ),
    (
        "batch 2-D",
        _buffer,
        lambda o: eye(3, batch_shape=np.ones((1, 1), int), out=o),
        ("batch_shape",),
    ),
    ("xp str", _buffer, lambda o: eye(3, batch_shape=2, xp="numpy", out=o), ("xp",)),
    (
        "xp module",
        _buffer,
        lambda o: eye(3, batch_shape=2, xp=np.linalg, out=o),
        ("xp",),
    ),
    (
        "device",
        _buffer,
        lambda o: eye(3, batch_shape=2, device="cuda", out=o),
        ("device",),
    ),
    ("chunks", _buffer, lambda o: eye(3, batch_shape=2, chunks=1, out=o), ("chunks",)),
    ("read-only", _read_only, lambda o: eye(3, batch_shape=2, out=o), ("read-only",)),
    (
        "broadcast view",
        lambda: np.broadcast_to(np.arange(3.0), (2, 3, 3)),
        lambda o: eye(3, batch_shape=2, out=o),
        ("out", "read-only"),
    ),
    (
        "eye_like x rank",
        _buffer,
        lambda o: eye_like(np.zeros(3), out=o),
        ("x", "rank"),
    ),
    (
        "eye_like shape",
        _buffer,
        lambda o: eye_like(np.zeros((2, 3, 4)), out=o),
        ("out", "(2, 3, 4)"),
    ),
    (
        "eye_like dtype",
        _buffer,
        lambda o: eye_like(np.zeros((2, 3, 3)), dtype="float32", out=o),
        ("out", "float32"),
    ),
    (
        "eye_like k",
        _buffer,
        lambda o: eye_like(np.zeros((2, 3, 3)), k=[1, 2, 3], out=o),
        ("k",),
    ),
    (
        "onnx takes no out",
        lambda: _buffer()[0],
        lambda o: eyelike.onnx.eye_like(np.zeros((3, 3)), out=o),
        ("out",),
    ),
    (
        "openvino takes no out",
        lambda: _buffer()[0],
        lambda o: eyelike.openvino.eye(3, 3, 0, output_type="f64", out=o),
        ("out",),
    ),
]


@pytest.mark.parametrize(
    ("make", "call", "words"),
    [pytest.param(m, c, w, id=i) for i, m, c, w in NUMPY_FAILURES],
)
def test_numpy_out_untouched_on_failure(
    make: Callable[[], Any], call: Callable[[Any], Any], words: tuple[str, ...]
) -> None:
    out = make()
    before = out.copy()
    with pytest.raises(ALLOWED) as info:
        call(out)
    message = str(info.value)
    for word in words:
        assert word in message, (word, message)
    assert out.tobytes() == before.tobytes()
    assert out.shape == before.shape
    assert out.dtype == before.dtype


def test_out_of_other_namespaces_untouched() -> None:
    torch = _torch()
    np_out = _buffer()
    np_before = np_out.copy()
    t_out = torch.full((2, 3, 3), 5.0, dtype=torch.float64)
    for call in (
        lambda: eye(3, batch_shape=2, xp=torch, out=np_out),
        lambda: eye(3, batch_shape=2, xp=np, out=t_out),
        lambda: eye_like(np.zeros((2, 3, 3)), out=t_out),
        lambda: eye_like(torch.zeros((2, 3, 3), dtype=torch.float64), out=np_out),
    ):
        with pytest.raises(TypeError, match="out"):
            call()
    assert np_out.tobytes() == np_before.tobytes()
    assert bool((t_out == 5.0).all())


def test_jax_out_refused() -> None:
    jnp = pytest.importorskip("jax.numpy")
    out = jnp.full((2, 2), 5.0)
    with pytest.raises(TypeError, match="immutable"):
        eye(2, out=out)
    assert bool((out == 5.0).all())


TORCH_FAILURES: list[tuple[str, Callable[[Any, Any], Any], str]] = [
    ("dtype", lambda t, o: eye(3, batch_shape=2, dtype="int8", out=o), "out"),
    ("shape", lambda t, o: eye(3, 4, batch_shape=2, out=o), "out"),
    ("k float", lambda t, o: eye(3, batch_shape=2, k=0.5, out=o), "k"),
    (
        "k float tensor",
        lambda t, o: eye(3, batch_shape=2, k=t.tensor([0.0, 1.0]), out=o),
        "k",
    ),
    ("k numpy too long", lambda t, o: eye(3, batch_shape=2, k=[0, 1, 2], out=o), "k"),
    ("device", lambda t, o: eye(3, batch_shape=2, device="meta", out=o), "device"),
    ("device junk", lambda t, o: eye(3, batch_shape=2, device="nope", out=o), "device"),
    ("batch", lambda t, o: eye(3, batch_shape=(2, -1), out=o), "batch_shape"),
    ("n_cols", lambda t, o: eye(3, 1.5, batch_shape=2, out=o), "n_cols"),
    ("xp", lambda t, o: eye(3, batch_shape=2, xp=np, out=o), "out"),
]


@pytest.mark.parametrize(
    ("call", "word"), [pytest.param(c, w, id=i) for i, c, w in TORCH_FAILURES]
)
def test_torch_out_untouched_on_failure(
    call: Callable[[Any, Any], Any], word: str
) -> None:
    torch = _torch()
    base = torch.arange(36, dtype=torch.float32).reshape(2, 3, 6)
    out = base[:, :, ::2]  # non-contiguous too
    before = base.clone()
    with pytest.raises(ALLOWED) as info:
        call(torch, out)
    assert word in str(info.value)
    assert torch.equal(base, before)


def test_torch_out_requiring_grad_refused_clearly() -> None:
    # Regression: autograd's own RuntimeError used to escape.
    torch = _torch()
    out = torch.full((2, 2), 5.0, requires_grad=True)
    with pytest.raises(ValueError, match="out"):
        eye(2, out=out)
    assert bool((out.detach() == 5.0).all())


def test_broadcast_huge_out_refused_before_allocating() -> None:
    src = np.array(5.0)
    out = np.broadcast_to(src, (2**20, 2**20))  # 8 TiB seen, 8 bytes held
    with pytest.raises(MemoryError, match="bytes"):
        eye(2**20, out=out)
    with pytest.raises(ValueError, match="read-only"):
        eye(2**10, out=out[: 2**10, : 2**10])
    assert float(src) == 5.0


def test_array_api_strict_out_untouched_on_failure() -> None:
    xs = pytest.importorskip("array_api_strict")
    out = xs.full((2, 3, 3), 5.0)
    calls: list[Callable[[], Any]] = [
        lambda: eye(3, batch_shape=2, dtype="float32", out=out),
        lambda: eye(3, 4, batch_shape=2, out=out),
        lambda: eye(3, batch_shape=2, k=[0.5, 1], out=out),
        lambda: eye(3, batch_shape=2, k=xs.asarray([0.0, 1.0]), out=out),
        lambda: eye(3, batch_shape=2, device=xs.Device("device1"), out=out),
        lambda: eye(3, batch_shape=2, xp=np, out=out),
    ]
    for call in calls:
        with pytest.raises(ALLOWED):
            call()
    assert bool(xs.all(out == 5.0))


# -------------------------------------------------- strided views, NumPy


# (id, base shape, base order, view of the base)
ViewCase = tuple[str, tuple[int, ...], str, View]
SMALL_VIEWS: list[ViewCase] = [
    ("contiguous", (2, 3, 4), "C", lambda a: a),
    ("transposed", (2, 4, 3), "C", lambda a: a.transpose(0, 2, 1)),
    ("2-D transposed", (5, 3), "C", lambda a: a.T),
    ("reversed batch", (3, 3, 4), "C", lambda a: a[::-1]),
    ("reversed rows", (2, 3, 4), "C", lambda a: a[:, ::-1]),
    ("reversed cols", (2, 3, 4), "C", lambda a: a[..., ::-1]),
    ("all reversed", (2, 3, 4), "C", lambda a: a[::-1, ::-1, ::-1]),
    ("step slices", (5, 7, 9), "C", lambda a: a[::2, 1::3, ::2]),
    ("negative steps", (5, 7, 9), "C", lambda a: a[::-2, -1::-3, 7::-2]),
    ("interior", (3, 6, 7), "C", lambda a: a[1:, 1:-1, 2:-1]),
    ("fortran", (2, 3, 4), "F", lambda a: a),
    ("fortran slice", (3, 5, 6), "F", lambda a: a[1:, ::2, 1:]),
    ("fortran transposed", (3, 5, 6), "F", lambda a: a.transpose(0, 2, 1)[:, ::-1]),
    ("moved axes", (3, 4, 2), "C", lambda a: np.moveaxis(a, -1, 0)),
    ("one row of cols", (1, 9), "C", lambda a: a[:, ::3]),
    ("empty batch", (0, 3, 3), "C", lambda a: a),
    ("empty cols", (2, 3, 4), "C", lambda a: a[:, :, 4:]),
    ("4-D mixed", (2, 3, 4, 5), "C", lambda a: a.transpose(1, 0, 3, 2)[::-1, :, ::2]),
]
DTYPES = ["float64", "uint8", "bool", "complex64", ">i4", "<f2", "bfloat16"]


def _dtype(name: str) -> np.dtype[Any]:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _touched_mask(base_shape: tuple[int, ...], view: View) -> np.ndarray[Any, Any]:
    """True where ``view`` of a base of ``base_shape`` lies (same indexing)."""
    marks = np.zeros(base_shape, dtype=bool)
    view(marks)[...] = True
    return marks


def _expected_matches(out: np.ndarray[Any, Any], k: int) -> None:
    """``out`` holds the rule's eye, checked cheaply for large outputs.

    The ones are read back by fancy indexing at ``[..., r, r + k]`` and
    counted; with the count equal to the number of positions, every other
    element must be zero.
    """
    n_rows, n_cols = out.shape[-2:]
    rows = np.arange(max(-k, 0), min(n_rows, n_cols - k))
    batch = int(np.prod(out.shape[:-2]))
    ones = (
        out.reshape(batch, n_rows, n_cols)[:, rows, rows + k]
        if out.ndim > 2
        else (out[rows, rows + k][None])
    )
    assert bool((ones == 1).all())
    assert int(np.count_nonzero(out)) == batch * rows.size


def _bits(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The raw bits of each element (NaN, -0.0 and byte order included)."""
    return a.view(f"u{a.dtype.itemsize}")


def _fill_view(
    base_shape: tuple[int, ...], order: str, view: View, dtype: np.dtype[Any], k: Any
) -> None:
    base = np.asarray(_pattern(base_shape, dtype), order=order)
    before = base.copy(order="K")
    out = view(base)
    assert np.shares_memory(out, base) or out.size == 0  # a view, not a copy
    shape = out.shape
    batch, (n_rows, n_cols) = shape[:-2], shape[-2:]
    result = eye(n_rows, n_cols, k=k, batch_shape=batch, out=out)
    assert result is out
    if out.size > 1 << 20:
        _expected_matches(out, k)
    else:
        expected = reference(batch, n_rows, n_cols, k)
        np.testing.assert_array_equal(to_numpy(out).astype(np.complex128), expected)
    outside = ~_touched_mask(base_shape, view)
    np.testing.assert_array_equal(_bits(base)[outside], _bits(before)[outside])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("base_shape", "order", "view"),
    [pytest.param(s, o, v, id=i) for i, s, o, v in SMALL_VIEWS],
)
@pytest.mark.parametrize("k", [0, 1, -2, 2**64])
def test_numpy_strided_out(
    base_shape: tuple[int, ...], order: str, view: View, dtype: str, k: int
) -> None:
    _fill_view(base_shape, order, view, _dtype(dtype), k)


@pytest.mark.parametrize(
    ("base_shape", "order", "view"),
    [pytest.param(s, o, v, id=i) for i, s, o, v in SMALL_VIEWS if len(s) > 2],
)
def test_numpy_strided_out_per_matrix_k(
    base_shape: tuple[int, ...], order: str, view: View
) -> None:
    batch = view(np.empty(base_shape)).shape[:-2]
    rng = np.random.default_rng(len(SMALL_VIEWS))
    k = rng.integers(-4, 5, size=batch)
    if k.size:
        k.flat[0] = 2**62  # far beyond the matrix: that matrix is all zeros
    _fill_view(base_shape, order, view, np.dtype(np.float32), k)


# Large views (32 MiB and more, past the caches) must have every stride
# honoured too: NumPy's fill zeroes them, then the diagonal is written.
LARGE_VIEWS: list[tuple[str, tuple[int, ...], str, View, int]] = [
    ("reversed rows", (3, 3200, 4000), "C", lambda a: a[:, ::-1, :], 37),
    ("transposed", (3, 4000, 3200), "C", lambda a: a.transpose(0, 2, 1), -1201),
    ("steps", (3, 3300, 7000), "C", lambda a: a[:, 1::2, ::-1], 0),
    ("reversed batch", (9, 2100, 2000), "C", lambda a: a[::-1, 3:-3, 5:], 4),
    ("2-D steps", (9000, 8000), "C", lambda a: a[::-1, ::2], -2),
    ("fortran", (2, 4300, 4300), "F", lambda a: a[:, 1:, :-1], 1),
    # Short rows: a dense diagonal, one element in every few cache lines.
    ("short rows reversed", (9000, 60, 64), "C", lambda a: a[::-1, :, ::-1], 5),
    ("short rows transposed", (9000, 64, 60), "C", lambda a: a.transpose(0, 2, 1), -3),
    ("short rows 2-D steps", (1_200_000, 60), "C", lambda a: a[::-1, ::2], 1),
]


@pytest.mark.parametrize(
    ("base_shape", "order", "view", "k"),
    [pytest.param(s, o, v, k, id=i) for i, s, o, v, k in LARGE_VIEWS],
)
def test_numpy_large_strided_out(
    base_shape: tuple[int, ...], order: str, view: View, k: int
) -> None:
    probe = view(np.empty(base_shape, dtype=np.uint8))
    assert probe.nbytes >= 32 << 20
    _fill_view(base_shape, order, view, np.dtype(np.uint8), k)


# ------------------------------------------------------------- overlaps


def test_two_overlapping_views_in_turn() -> None:
    base = np.full((2, 5, 4), 7.0)
    first, second = base[:, 0:3, :], base[:, 1:4, :]
    eye(3, 4, batch_shape=2, k=0, out=first)
    eye(3, 4, batch_shape=2, k=1, out=second)
    np.testing.assert_array_equal(second, reference((2,), 3, 4, 1))
    # Row 0 keeps the first call's row; row 4 was never part of either view.
    np.testing.assert_array_equal(base[:, 0], reference((2,), 3, 4, 0)[:, 0])
    np.testing.assert_array_equal(base[:, 4], np.full((2, 4), 7.0))


def test_k_that_is_a_view_of_out() -> None:
    out = np.zeros((2, 3, 3), dtype=np.int64)
    out[:, 0, 0] = [1, -1]
    k = out[:, 0, 0]  # the offsets live inside the buffer being written
    eye(3, batch_shape=2, k=k, out=out)
    np.testing.assert_array_equal(out, reference((2,), 3, 3, [1, -1]))


def test_eye_like_out_is_x() -> None:
    x = np.full((2, 3, 4), 9.0)
    result = eye_like(x, k=-1, out=x)
    assert result is x
    np.testing.assert_array_equal(x, reference((2,), 3, 4, -1))


def test_out_view_of_structured_field() -> None:
    base = np.zeros((2, 3, 3), dtype=[("a", "f8"), ("b", "f8")])
    base["a"] = 5.0
    base["b"] = 6.0
    eye(3, batch_shape=2, k=1, out=base["a"])
    np.testing.assert_array_equal(base["a"], reference((2,), 3, 3, 1))
    np.testing.assert_array_equal(base["b"], np.full((2, 3, 3), 6.0))


def _internally_overlapping() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    base = np.full(5, 7.0)
    # out[i, j] is base[i + j]: out[0, 2] and out[1, 1] are one element.
    out = as_strided(base, shape=(3, 3), strides=(8, 8))
    return base, out


def test_numpy_out_with_internal_overlap_refused() -> None:
    base, out = _internally_overlapping()
    before = base.copy()
    # No correct result exists (out[0, 2] is out[1, 1]): refusal is the answer.
    with pytest.raises(ValueError, match="out"):
        eye(3, out=out)
    assert base.tobytes() == before.tobytes()


def test_torch_out_with_internal_overlap_refused() -> None:
    torch = _torch()
    base = torch.full((3,), 7.0)
    out = base.expand(3, 3)
    with pytest.raises(ValueError, match="out"):
        eye(3, out=out)
    assert bool((base == 7.0).all())


# --------------------------------------------------- torch and array-api-strict


# (id, base shape, view of the base, whether the view has a batch)
TORCH_VIEWS: list[tuple[str, tuple[int, ...], View, bool]] = [
    ("contiguous", (2, 3, 4), lambda a: a, True),
    ("transposed", (2, 4, 3), lambda a: a.transpose(-1, -2), True),
    ("2-D .T", (5, 3), lambda a: a.T, False),
    ("step slices", (5, 7, 9), lambda a: a[::2, 1::3, ::2], True),
    ("interior", (3, 6, 7), lambda a: a[1:, 1:-1, 2:-1], True),
    ("permuted", (3, 4, 2), lambda a: a.permute(2, 0, 1), True),
    ("as_strided", (40,), lambda a: a.as_strided((2, 3, 4), (20, 6, 1), 1), True),
]


@pytest.mark.parametrize(
    ("base_shape", "view", "per_matrix"),
    [
        pytest.param(s, v, per, id=f"{i}-{'per-matrix k' if per else 'k=1'}")
        for i, s, v, batched in TORCH_VIEWS
        for per in (False, True)
        if batched or not per
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int16", "bool", "bfloat16"])
def test_torch_strided_out(
    base_shape: tuple[int, ...], view: View, dtype: str, per_matrix: bool
) -> None:
    torch = _torch()
    tdt = getattr(torch, dtype)
    base = torch.full(base_shape, 7).to(tdt) if dtype != "bool" else None
    if base is None:
        base = torch.arange(int(np.prod(base_shape))).reshape(base_shape) % 2 == 0
    before = base.clone()
    out = view(base)
    shape = tuple(out.shape)
    batch, (n_rows, n_cols) = shape[:-2], shape[-2:]
    k: Any = 1
    if per_matrix:
        k = torch.arange(int(np.prod(batch))).reshape(batch) - 1
    result = eye(n_rows, n_cols, k=k, batch_shape=batch, out=out)
    assert result is out
    ks = k.tolist() if per_matrix else k
    np.testing.assert_array_equal(
        to_numpy(out).astype(np.float64),
        reference(batch, n_rows, n_cols, ks).astype(np.float64),
    )
    marks = torch.zeros(base_shape, dtype=torch.bool)
    view(marks)[...] = True
    outside = ~marks
    assert torch.equal(base[outside], before[outside])


def test_array_api_strict_strided_out() -> None:
    xs = pytest.importorskip("array_api_strict")
    base = xs.full((3, 5, 7), 7, dtype=xs.int16)
    out = base[::2, 1::2, :]
    result = eye(2, 7, k=2, batch_shape=2, out=out)
    assert result is out
    got = to_numpy(base)
    expected = np.full((3, 5, 7), 7, dtype=np.int16)
    expected[::2, 1::2, :] = reference((2,), 2, 7, 2)
    np.testing.assert_array_equal(got, expected)
    per = eye(2, 7, k=xs.asarray([0, -1]), batch_shape=2, out=base[1:, :2, :])
    np.testing.assert_array_equal(to_numpy(per), reference((2,), 2, 7, [0, -1]))
    np.testing.assert_array_equal(to_numpy(base)[0], expected[0])


def test_zero_d_k_array_fills_out() -> None:
    # Regression: a 0-D NumPy k with no batch zeroed out, then raised NumPy's
    # "Calling nonzero on 0d arrays is not allowed" (a half-written out).
    out = _buffer()[0]
    assert eye(3, k=np.array(1), out=out) is out
    np.testing.assert_array_equal(out, reference((), 3, 3, 1))
    like = eye_like(np.zeros((3, 4)), k=np.array(-1, dtype=np.int8))
    np.testing.assert_array_equal(like, reference((), 3, 4, -1))


def test_eye_like_dtype_defaults_to_outs() -> None:
    # With out= and no dtype, the result takes out's dtype (not x's).
    x = np.zeros((2, 3, 3), dtype=np.float32)
    out = np.full((2, 3, 3), 7, dtype=np.int16)
    assert eye_like(x, k=1, out=out) is out
    np.testing.assert_array_equal(out, reference((2,), 3, 3, 1))


# ---------------------------------------------- contiguous outs: one memset

# A contiguous NumPy out of 64 KiB or more is zeroed by one memset of the C
# library (whatever its batch axes), then the diagonal is written; one of a
# one-byte type by NumPy's own fill (memset itself, less a ctypes call). No other
# copy: a template of finished matrices copied over the out was faster than
# NumPy's idiom (fill, then the diagonal) on some machines and slower on
# others, and went.
CONTIGUOUS: list[tuple[str, tuple[int, ...], str, Any]] = [
    ("long rows", (3, 600, 700), "float32", 5),
    ("short rows", (700, 40, 40), "float64", -2),
    ("short rows, odd batch", (1401, 60, 60), "float32", 1),
    ("two batch axes", (2, 1100, 64, 64), "float32", 0),
    ("bool", (2100, 128, 128), "bool", -1),
    ("long rows past 32 MiB", (2, 2100, 2100), "float32", -4),
    ("complex, k beyond", (2, 300, 300), "complex128", 10**6),
    ("tall 2-D", (600_000, 60), "uint8", 3),
    ("per-matrix k", (64, 32, 32), "float32", "per-matrix"),
]


@pytest.mark.parametrize(
    ("shape", "dtype", "k"), [pytest.param(*c[1:], id=c[0]) for c in CONTIGUOUS]
)
def test_contiguous_out_zeroed_by_one_memset(
    shape: tuple[int, ...], dtype: str, k: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    memsets: list[tuple[int, int]] = []
    real_memset = ctypes.memset

    def memset(address: int, value: int, count: int) -> Any:
        memsets.append((address, count))
        return real_memset(address, value, count)

    monkeypatch.setattr(ctypes, "memset", memset)
    out = _pattern(shape, dtype)
    if k == "per-matrix":
        k = np.arange(shape[0]) % 7 - 3
        eye(shape[-2], shape[-1], k=k, batch_shape=shape[:-2], out=out)
        expected = reference(shape[:-2], shape[-2], shape[-1], k.tolist())
        np.testing.assert_array_equal(out, expected.real.astype(dtype))
    else:
        assert eye(shape[-2], shape[-1], k=k, batch_shape=shape[:-2], out=out) is out
        _expected_matches(out, k)
    # The whole buffer, once (a one-byte type: NumPy's fill, none).
    once = [(out.ctypes.data, out.nbytes)]
    assert memsets == ([] if out.itemsize == 1 else once)


def test_small_or_strided_out_is_zeroed_by_numpy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ctypes, "memset", _no_memset)
    small = _pattern((4, 5, 6), "float64")
    eye(5, 6, batch_shape=4, k=1, out=small)
    _expected_matches(small, 1)
    strided = _pattern((3, 400, 400), "float32")[:, ::2, :]
    eye(200, 400, batch_shape=3, k=-5, out=strided)
    _expected_matches(strided, -5)


def _no_memset(*args: Any) -> None:
    msg = "memset on a small or non-contiguous out"
    raise AssertionError(msg)


def test_zero_of_every_accepted_dtype_is_all_zero_bytes() -> None:
    # What makes memset a valid way to zero any out eyelike accepts.
    names = [t.__name__ for t in np.sctypeDict.values() if isinstance(t, type)]
    ml_dtypes = pytest.importorskip("ml_dtypes")
    names += [n for n in dir(ml_dtypes) if not n.startswith("_")]
    checked = 0
    for name in sorted(set(names)):
        try:
            a = eye(1, dtype=name)
        except (TypeError, ValueError):
            continue
        zero = np.frombuffer(bytes(a.dtype.itemsize), a.dtype)
        assert zero.astype(np.complex128)[0] == 0, name
        checked += 1
    assert checked >= 20
