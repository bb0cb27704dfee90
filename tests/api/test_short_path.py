"""The backends' short paths for the common small call give exactly what the
general path gives: the same array (values, dtype, shape, device, a fresh
contiguous one), or the same exception with the same message, on every input
the fuzzers make.

``eye`` and ``eye_like`` try ``Backend.short_eye`` first, the one hook
through which the front end offers it (NumPy's, torch's and
array-api-strict's answer; the others always decline; NumPy's alone takes
an ``out``) and fall back to the general path when it declines (returns
None). Here both are called on the same
arguments, the general one with the short path switched off, so a short
path that accepted something the general path refuses, or built a different
array, fails.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any
from unittest import mock

import numpy as np
import pytest
from helpers.fuzz_namespaces import torch
from helpers.fuzz_strategies import EDGES, anything, fuzz, hostile
from hypothesis import example, given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import eyelike
from eyelike._backends import DEFAULT, backend_of_array, backend_of_namespace
from eyelike._backends._base import Backend
from eyelike._backends.numpy import NumPyBackend
from eyelike._validate.gate import admit

# (Its dtypes are in the parameters below: without it the module skips.)
ml_dtypes = pytest.importorskip(
    "ml_dtypes", reason="needs ml_dtypes: its dtypes are among the inputs compared"
)

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")

# Mostly small counts, so the short path takes a good share of the inputs.
small_counts = st.integers(0, 300) | st.integers(-3, 3)
counts = small_counts | hostile("n_rows")
offsets = st.integers(-400, 400) | hostile("k")
dtypes = st.none() | hostile("dtype")
batches = st.lists(st.integers(0, 5) | st.integers(-2, 2), max_size=3).map(tuple)
TORCH_DTYPES = (
    [v for v in vars(torch).values() if isinstance(v, torch.dtype)] if torch else []
)
torch_dtypes = st.sampled_from(TORCH_DTYPES) if torch else st.nothing()
# The dtypes an input tensor can have (not the quantized or bit types).
MAKEABLE = [d for d in TORCH_DTYPES if not str(d).startswith(("torch.q", "torch.bits"))]
sources = st.sampled_from(MAKEABLE) if torch else st.nothing()


def _result(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "returned", call()
    except Exception as exc:  # the caller's own __index__ errors too
        return "raised", (type(exc), str(exc))


def _short(
    backend: Backend, shape: Any, k: Any, dtype: Any, like: Any, device: Any, out: Any
) -> Any:
    """The front end's short path on these arguments, as it takes them:
    ``like``'s shape (`_short_shape`), the gate, then `short_eye`; None
    where one of them declines."""
    if like is not None:
        shape = backend._short_shape(like)
        if shape is None:
            return None
    settled = admit(shape, k)
    if settled is None:
        return None
    return backend.short_eye(shape, settled, dtype, like, device, out)


def _declined(short: tuple[str, Any]) -> bool:
    return short[0] == "returned" and short[1] is None


def _general(backend: Backend, call: Callable[[], Any]) -> tuple[str, Any]:
    """``call`` with ``backend``'s short path declining everything."""
    with mock.patch.object(type(backend), "short_eye", return_value=None):
        return _result(call)


def _same_values(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    """Whether two NumPy arrays hold the same values, of one dtype and shape.

    Values, not bytes: a long double's padding bytes (6 of its 16 on
    x86-64) are whatever the write left there, so two equal results can
    differ in them. What the bytes told apart that ``==`` does not is
    checked besides: the sign of a zero (of each part of a complex, and of
    ml_dtypes' floats), a bool's byte (1, nothing else, for True), the type
    of each element of an object array (1, 1.0 and True are equal). NaN
    equals NaN (its payload is not compared: an eye holds no NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.names is not None:  # structured: field by field, gaps unread
        return all(_same_values(a[name], b[name]) for name in a.dtype.names)
    if a.dtype.type.__module__ == "ml_dtypes":
        # Widened exactly (each of their values is a float32's, or a
        # complex64's), so their NaN and -0.0 are read as NumPy's.
        wide = np.complex64 if "complex" in a.dtype.name else np.float32
        a, b = a.astype(wide), b.astype(wide)
    kind = a.dtype.kind
    if kind == "O":
        return all(
            type(x) is type(y) and bool(x == y)
            for x, y in zip(a.ravel(), b.ravel(), strict=True)
        )
    if kind == "V":  # raw bytes (no fields): the bytes are the value
        return a.tobytes() == b.tobytes()
    if kind == "b":  # the byte itself: a bool of byte 2 is not NumPy's True
        return np.array_equal(a.view(np.uint8), b.view(np.uint8))
    if kind in "mM":  # the counts themselves (NaT is one too)
        return np.array_equal(a.view(np.int64), b.view(np.int64))
    if kind in "fc":
        if not np.array_equal(a, b, equal_nan=True):
            return False
        parts = (np.real, np.imag) if kind == "c" else (np.asarray,)
        return all(
            np.array_equal(np.signbit(part(a)), np.signbit(part(b))) for part in parts
        )
    return np.array_equal(a, b)  # integers, strings


def _same(short: tuple[str, Any], general: tuple[str, Any]) -> None:
    assert short[0] == general[0], (short, general)
    if short[0] == "raised":
        assert short[1] == general[1]
        return
    a, b = short[1], general[1]
    assert type(a) is type(b)
    if type(a).__module__.startswith("array_api_strict"):
        assert (a.shape, a.dtype, a.device) == (b.shape, b.dtype, b.device)
        assert _same_values(np.asarray(a), np.asarray(b))
        return
    if type(a) is np.ndarray:
        assert (a.shape, a.dtype) == (b.shape, b.dtype)
        assert _same_values(a, b)
        for fresh in (a, b):  # what the docs promise, of either path's
            assert fresh.flags.writeable
            assert fresh.flags.c_contiguous
            assert fresh.base is None
        return
    assert (a.shape, a.dtype, a.device) == (b.shape, b.dtype, b.device)
    assert type(a.shape) is type(b.shape)
    assert a.is_contiguous()
    assert b.is_contiguous()
    assert a._base is None
    assert b._base is None
    assert not a.requires_grad
    if a.device.type != "meta":  # a meta tensor has no values
        # Bytes, which here are the values bit for bit: no torch dtype has
        # padding (each byte of an element is its value's: a bool's, the
        # sign of a zero's), and a byte view is the one comparison every
        # torch dtype has (torch.equal has no kernel for float8, complex32,
        # the bits and sub-byte types).
        assert torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def _compare_eye(
    n_rows: Any,
    n_cols: Any,
    k: Any,
    dtype: Any,
    batch: Any = (),
    xp: Any = None,
    device: Any = None,
) -> bool:
    """Compare the two paths of ``eye``; returns whether the short one ran."""
    backend = backend_of_namespace(xp)
    # (An int batch reaches the short path as a tuple of one.)
    dims = (batch,) if type(batch) is int and batch >= 0 else batch
    if type(dims) is not tuple:
        return False  # the general path alone decides
    shape = (*dims, n_rows, n_rows if n_cols is None else n_cols)
    short = _result(lambda: _short(backend, shape, k, dtype, None, device, None))
    if _declined(short):
        return False  # the general path alone decides
    general = _general(
        backend,
        lambda: eyelike.eye(
            n_rows, n_cols, k=k, batch_shape=batch, dtype=dtype, xp=xp, device=device
        ),
    )
    _same(short, general)
    return True


def _compare_eye_like(x: Any, k: Any, dtype: Any) -> bool:
    """Compare the two paths of ``eye_like``; returns whether the short one
    ran."""
    backend = backend_of_array(x)
    want = x.dtype if dtype is None else dtype
    short = _result(lambda: _short(backend, None, k, want, x, None, None))
    if _declined(short):
        return False
    _same(short, _general(backend, lambda: eyelike.eye_like(x, k=k, dtype=dtype)))
    return True


# ----------------------------------------------------------------- NumPy


@fuzz(400)
@given(n_rows=counts, n_cols=st.none() | counts, k=offsets, dtype=dtypes)
def test_eye_short_path_is_the_general_path(
    n_rows: Any, n_cols: Any, k: Any, dtype: Any
) -> None:
    _compare_eye(n_rows, n_cols, k, dtype)


@fuzz(200)
@given(
    shape=st.tuples(small_counts, small_counts),
    source=st.sampled_from(["float64", "float32", "int8", "bool", "complex64"]),
    k=offsets,
    dtype=dtypes,
)
def test_eye_like_short_path_is_the_general_path(
    shape: tuple[int, int], source: str, k: Any, dtype: Any
) -> None:
    if min(shape) < 0:
        return
    _compare_eye_like(np.empty(shape, dtype=source), k, dtype)


@fuzz(200)
@given(value=anything)
@example(value=np.longdouble(0.0))  # a long double's eye (padding bytes)
def test_short_path_on_anything_in_each_position(value: Any) -> None:
    for args in ((value, 3, 0, None), (3, value, 0, None), (3, 3, value, None)):
        _compare_eye(*args)
    _compare_eye(3, 4, 1, value)
    _compare_eye(3, 4, 1, None, device=value)
    _compare_eye(3, 4, 1, None, batch=value)
    if torch is not None:
        _compare_eye(3, 4, 1, None, xp=torch, device=value)
        _compare_eye(3, 4, 1, None, xp=torch, batch=value)


def _padding_bytes(dtype: Any) -> list[int]:
    """The bytes of an element of ``dtype`` that are no part of its value:
    those that, changed, leave 1 equal to 1."""
    one = np.ones(1, dtype)
    found = []
    for i in range(one.dtype.itemsize):
        probe = one.copy()
        probe.view(np.uint8)[i] ^= 0xFF
        if probe[0] == one[0]:
            found.append(i)
    return found


@pytest.mark.parametrize("dtype", [np.longdouble, np.clongdouble])
def test_long_double_padding_is_no_part_of_the_value(dtype: Any) -> None:
    """Bug (NumPy 1.26, hypothesis 6.170): the two paths' results were
    compared by their bytes, and ``dtype=np.longdouble(0.0)`` gave the same
    values on both, but a long double's padding bytes hold whatever the
    write left there: a failure where nothing differed. Two eyes of the
    same values and different padding are the same; a value apart (a sign
    of zero too) is not."""
    want = np.eye(3, 4, k=1, dtype=dtype)
    padding = _padding_bytes(want.dtype)
    if not padding:
        pytest.skip(f"{want.dtype} has no padding bytes on this machine")
    got = want.copy()
    raw = got.view(np.uint8).reshape(got.size, got.dtype.itemsize)
    raw[:, padding] ^= 0xA5  # every element's padding, not its value
    assert got.tobytes() != want.tobytes()  # what the old comparison saw
    assert _same_values(got, want)
    _same(("returned", got), ("returned", want))
    changes: list[tuple[tuple[int, int], Any]] = [((0, 1), 2), ((0, 0), -0.0)]
    if want.dtype.kind == "c":
        changes.append(((2, 3), 1j))
    for index, value in changes:
        apart = got.copy()
        apart[index] = value
        assert not _same_values(apart, want), (index, value)
        with pytest.raises(AssertionError):
            _same(("returned", apart), ("returned", want))


def test_values_are_compared_where_bytes_told_them_apart() -> None:
    """The value comparison says "not the same" wherever the byte
    comparison did for an eye's values: another value, dtype or shape, a
    zero's sign, a bool's byte, an object's type."""
    base = np.eye(2, 3)
    assert _same_values(base, base.copy())
    assert not _same_values(base, np.eye(2, 3, k=1))
    assert not _same_values(base, base.astype(np.float32))
    assert not _same_values(base, np.eye(3, 2))
    assert not _same_values(base, np.where(base == 0, -0.0, base))
    c = np.eye(2, dtype=np.complex64)
    negative = c.copy()
    negative.imag[...] = -0.0  # an imaginary part of -0.0 (== 0.0)
    assert not _same_values(c, negative)
    b = np.eye(2, dtype=bool)
    two = b.copy()
    two.view(np.uint8)[0, 0] = 2  # True by ==, not NumPy's True byte
    assert not _same_values(b, two)
    objects = np.eye(2).astype(object)
    assert _same_values(objects, objects.copy())
    assert not _same_values(objects, np.eye(2, dtype=int).astype(object))
    bf = np.eye(2, dtype=ml_dtypes.bfloat16)
    assert _same_values(bf, bf.copy())
    assert not _same_values(bf, np.where(bf == 0, -bf, bf))  # -0.0
    nan = np.array([np.nan, 1.0])
    assert _same_values(nan, nan.copy())


def test_short_path_takes_the_common_calls() -> None:
    # Otherwise the comparisons above would prove nothing about it.
    taken = [
        _compare_eye(3, None, 0, None),
        _compare_eye(2, 5, -1, "int8"),
        _compare_eye(256, 256, 10**30, "bool"),
        _compare_eye_like(np.empty((3, 3)), 0, None),
    ]
    assert all(taken)
    assert not _compare_eye(3, None, 0.0, None)  # a float k: general path
    assert _compare_eye(1000, 1000, 0, None)  # larger, where memory holds it
    assert _compare_eye(300, None, -2, "int8", batch=(2,))
    assert _compare_eye(3, None, 1, None, batch=(2,))  # a small batch
    assert _compare_eye(3, None, -1, "int8", batch=4)
    # Empty outputs: the general path's, one policy for every library.
    assert not _compare_eye(0, 7, 9, np.float32)
    assert not _compare_eye(3, None, 0, None, batch=(0, 2))
    assert not _compare_eye(10**6, None, 0, None, batch=(0,))
    assert not _compare_eye_like(np.empty((2, 0, 3)), 0, None)
    assert not _compare_eye(3, None, [0, 1], None, batch=(2,))  # a list k
    assert not _compare_eye(1, None, 0, None, batch=(1,) * 63)  # too many dims
    assert _compare_eye(3, None, 0, "float64", device="cpu")  # NumPy's one device
    assert not _compare_eye(3, None, 0, None, device="gpu")
    assert not _compare_eye_like(np.empty(3), 0, None)  # rank 1: general
    assert _compare_eye_like(np.empty((2, 3, 3)), 0, None)  # a small batch
    assert not _compare_eye_like(np.empty((300, 3, 3)), [0] * 300, None)
    assert DEFAULT.short_eye((3, 3), 0, None, None, None, None) is not None


def test_numpy_short_path_declines_what_memory_cannot_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A larger output takes the short path only where it fits this
    machine's memory: on a smaller machine the general path refuses it."""
    from eyelike._validate import size

    assert _compare_eye(512, None, 0, "float64", batch=(4,))  # 8 MiB
    monkeypatch.setattr(size, "physical_memory", lambda: 1 << 20)
    assert not _compare_eye(512, None, 0, "float64", batch=(4,))
    with pytest.raises(MemoryError, match="more than this machine's"):
        eyelike.eye(512, batch_shape=4)
    # 1 MiB in float64 fits, but not at the gate's bound (the widest item
    # and scratch, 32 bytes an element): the general path builds it.
    assert not _compare_eye(256, None, 0, "float64", batch=(2,))
    assert eyelike.eye(256, batch_shape=2).shape == (2, 256, 256)
    monkeypatch.setattr(size, "physical_memory", lambda: 4 << 20)
    assert _compare_eye(256, None, 0, "float64", batch=(2,))


@needs_torch
def test_torch_short_path_declines_what_memory_cannot_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from eyelike._validate import size

    x = torch.empty(4, 512, 512)
    assert _compare_eye(512, None, 0, torch.float32, batch=(4,), xp=torch)
    assert _compare_eye_like(x, 1, None)
    monkeypatch.setattr(size, "physical_memory", lambda: 1 << 20)
    assert not _compare_eye(512, None, 0, torch.float32, batch=(4,), xp=torch)
    assert not _compare_eye_like(x, 1, None)
    with pytest.raises(MemoryError, match="more than this machine's"):
        eyelike.eye_like(x)


@needs_torch
@pytest.mark.parametrize("device", ["meta", torch.device("meta")] if torch else [])
def test_torch_per_matrix_short_path_declines_a_result_off_the_cpu_unbuilt(
    device: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in review: after the short path's per-matrix build was merged
    into the general path's, a result off the CPU (a meta or CUDA one) was
    built by the short path, thrown away (it returns a CPU result only),
    and built again by the general path. It declines before building now."""
    from eyelike._backends import torch as torch_backend

    k = torch.arange(8) % 3 - 1
    calls: list[str] = []
    real = torch_backend.per_matrix

    def counted(*args: Any) -> Any:
        calls.append(str(args[4]))
        return real(*args)

    monkeypatch.setattr(torch_backend, "per_matrix", counted)
    short = torch_backend.TORCH.short_eye((8, 4, 4), k, None, None, device, None)
    assert short is None
    assert calls == []  # declined before any build
    got = eyelike.eye(4, batch_shape=8, k=k, device=device, xp=torch)
    assert got.is_meta
    assert got.shape == (8, 4, 4)
    # On the CPU the short path does build it.
    torch_backend.TORCH.short_eye((8, 4, 4), k, None, None, "cpu", None)
    assert calls == ["cpu"]


@needs_torch
@pytest.mark.parametrize("k", [2**70, -(2**63) - 5, 2**63, 601, -601])
def test_torch_short_path_offsets_beyond_a_large_matrix(k: int) -> None:
    """Bug (found in review): a larger output took the short path with the
    caller's own k, and torch's diagonal() of a matrix over 2**18 elements
    overflowed past int64 where the general path (k clamped) gave zeros."""
    x = torch.empty(2, 600, 600)
    assert _compare_eye_like(x, k, None)
    assert _compare_eye(600, None, k, torch.float32, batch=(2,), xp=torch)
    assert not eyelike.eye_like(x, k=k).any()


def test_short_path_on_the_edge_values() -> None:
    for value in EDGES:
        for args in ((value, 3, 0, None), (3, 3, value, None), (3, 3, 0, value)):
            _compare_eye(*args)


# ------------------------------------------------------------ NumPy, out=

OUT_DTYPES = ["float64", "float32", "int8", "uint64", "bool", "complex64"]
OUT_DTYPES += [ml_dtypes.bfloat16, ml_dtypes.int4, "object", "datetime64[s]", ">f4"]
LAYOUTS = ["C", "F", "transposed", "read-only", "strided", "subclass", "overlapping"]


def _make_out(shape: tuple[int, ...], dtype: Any, layout: str) -> np.ndarray[Any, Any]:
    """An ``out`` of ``shape`` and ``dtype`` (7 wherever it has a value), laid
    out as ``layout`` says; the same array each call."""
    if layout == "transposed":
        a = np.full(shape[::-1], 7, dtype=dtype).T
    elif layout == "strided":
        a = np.full((*shape[:-1], 2 * shape[-1]), 7, dtype=dtype)[..., ::2]
    elif layout == "overlapping":
        a = as_strided(np.full(shape, 7, dtype=dtype), strides=(0,) * len(shape))
    else:
        a = np.full(shape, 7, dtype=dtype, order="F" if layout == "F" else "C")
    if layout == "read-only":
        a.flags.writeable = False
    if layout == "subclass":
        a = a.view(_Sub)
    return a


class _Sub(np.ndarray):  # type: ignore[type-arg]
    """An ndarray subclass (the general path's alone)."""


def _untouched(out: Any, fresh: Any) -> bool:
    """Whether ``out`` still holds what a ``fresh`` one holds (two arrays:
    their values, not their padding bytes)."""
    return _same_values(np.asarray(out), np.asarray(fresh))


def _compare_out(
    make_out: Callable[[], Any],
    args: tuple[Any, ...] = (),
    like: Any = None,
    **keywords: Any,
) -> bool:
    """Compare the two paths of ``eye(*args, **keywords, out=)`` (or of
    ``eye_like(like, ..., out=)``), each with its own ``out`` from
    ``make_out``; returns whether the short one ran. The short path that
    declines leaves its ``out`` untouched; where both run, the two ``out``
    end the same, and where both raise, both are untouched."""
    mine, theirs = make_out(), make_out()
    k, dtype = keywords.get("k", 0), keywords.get("dtype")
    if like is None:
        batch = keywords.get("batch_shape", ())
        dims = (batch,) if type(batch) is int and batch >= 0 else batch
        if type(dims) is not tuple:
            return False  # the general path alone decides
        n_rows, n_cols = args if len(args) == 2 else (args[0], None)
        shape = (*dims, n_rows, n_rows if n_cols is None else n_cols)
        device = keywords.get("device")
        short = _result(lambda: _short(DEFAULT, shape, k, dtype, None, device, mine))
        call = lambda: eyelike.eye(*args, **keywords, out=theirs)  # noqa: E731
    else:
        short = _result(lambda: _short(DEFAULT, None, k, dtype, like, None, mine))
        call = lambda: eyelike.eye_like(like, **keywords, out=theirs)  # noqa: E731
    if _declined(short):
        assert _untouched(mine, make_out())
        return False
    general = _general(DEFAULT, call)
    assert short[0] == general[0], (short, general)
    if short[0] == "raised":
        assert short[1] == general[1]
        assert _untouched(mine, make_out())
        assert _untouched(theirs, make_out())
        return True
    assert short[1] is mine
    assert general[1] is theirs
    assert _same_values(mine, theirs)
    return True


@fuzz(300)
@given(
    batch=st.lists(st.integers(0, 3), max_size=2).map(tuple) | st.integers(-1, 3),
    n_rows=st.integers(0, 5) | hostile("n_rows"),
    n_cols=st.none() | st.integers(0, 5),
    k=offsets,
    dtype=st.none() | st.sampled_from(OUT_DTYPES) | hostile("dtype"),
    out_dtype=st.sampled_from(OUT_DTYPES),
    # The out's shape: the asked one, or one row more.
    wrong_shape=st.booleans(),
    layout=st.sampled_from(LAYOUTS),
    device=st.sampled_from([None, "cpu"]) | hostile("device"),
)
def test_eye_out_short_path_is_the_general_path(
    batch: Any,
    n_rows: Any,
    n_cols: Any,
    k: Any,
    dtype: Any,
    out_dtype: Any,
    wrong_shape: bool,
    layout: str,
    device: Any,
) -> None:
    # An out of the asked shape where it can be made (a negative batch or
    # a hostile count: of that shape in absolute value, at most 6 rows).
    dims = tuple(abs(d) for d in ((batch,) if type(batch) is int else batch))
    rows = min(abs(n_rows), 6) if type(n_rows) is int else 2
    shape = (*dims, rows + wrong_shape, rows if n_cols is None else n_cols)
    if not all(shape):
        return  # (an empty out is the general path's alone)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's notes on casting 7 to int4
        _compare_out(
            lambda: _make_out(shape, out_dtype, layout),
            (n_rows, n_cols),
            k=k,
            batch_shape=batch,
            dtype=dtype,
            device=device,
        )


@fuzz(200)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple),
    k=offsets,
    dtype=st.none() | st.sampled_from(OUT_DTYPES) | hostile("dtype"),
    out_dtype=st.sampled_from(OUT_DTYPES),
    wrong_shape=st.booleans(),
    layout=st.sampled_from(LAYOUTS),
)
def test_eye_like_out_short_path_is_the_general_path(
    shape: tuple[int, ...],
    k: Any,
    dtype: Any,
    out_dtype: Any,
    wrong_shape: bool,
    layout: str,
) -> None:
    x = np.empty(shape, dtype="float32")
    out_shape = (*shape[:-1], shape[-1] + wrong_shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare_out(
            lambda: _make_out(out_shape, out_dtype, layout), like=x, k=k, dtype=dtype
        )


@fuzz(100)
@given(value=anything)
def test_out_short_path_on_anything_in_each_position(value: Any) -> None:
    def out() -> np.ndarray[Any, Any]:
        return _make_out((2, 3, 4), "float32", "C")

    _compare_out(out, (value, 4), batch_shape=2)
    _compare_out(out, (3, value), batch_shape=2)
    _compare_out(out, (3, 4), batch_shape=(value,))
    _compare_out(out, (3, 4), batch_shape=2, k=value)
    _compare_out(out, (3, 4), batch_shape=2, dtype=value)
    _compare_out(out, (3, 4), batch_shape=2, device=value)
    _compare_out(out, like=np.empty((2, 3, 4)), k=value)
    _compare_out(out, like=np.empty((2, 3, 4)), dtype=value)


def test_out_short_path_takes_the_common_calls() -> None:
    def out(
        shape: tuple[int, ...], dtype: Any = "float64", layout: str = "C"
    ) -> Callable[[], Any]:
        return lambda: _make_out(shape, dtype, layout)

    assert _compare_out(out((3, 3)), (3,))
    assert _compare_out(out((3, 4), "int8"), (3, 4), k=-1)
    assert _compare_out(out((2, 3, 3), "bool"), (3,), batch_shape=2, k=10**30)
    assert _compare_out(out((2, 3, 3)), (3,), batch_shape=(2,), dtype="float64")
    assert _compare_out(out((256, 256, 256), "uint8"), (256,), batch_shape=256)
    assert _compare_out(out((2, 3, 3), ml_dtypes.bfloat16), (3,), batch_shape=2)
    assert _compare_out(out((2, 3, 4)), like=np.empty((2, 3, 4)), k=1)
    assert _compare_out(out((3, 3)), (3,), device="cpu")
    # Refused by a check the short path leaves to the general one: declined.
    for layout in LAYOUTS[1:]:
        assert not _compare_out(out((2, 3, 3), layout=layout), (3,), batch_shape=2)
    assert not _compare_out(out((3, 3)), (3,), dtype="float32")  # another dtype
    assert not _compare_out(out((3, 4)), (3,))  # another shape
    assert not _compare_out(out((0, 3)), (0, 3))  # empty: the general path's
    # The dtype's check is the short path's too: the general path's error.
    assert _compare_out(out((3, 3), "object"), (3,))
    with pytest.raises(eyelike.DTypeError):
        DEFAULT.short_eye((3, 3), 0, None, None, None, np.empty((3, 3), object))
    assert not _compare_out(out((3, 3)), (np.int64(3),))  # a NumPy count
    assert not _compare_out(out((3, 3)), (3,), k=np.int64(0))  # a NumPy k
    assert not _compare_out(out((2, 3, 3)), (3,), batch_shape=2, k=[0, 1])
    assert not _compare_out(out((3,)), like=np.empty(3))  # rank 1


_NUMPY_SHORT_EYE = NumPyBackend.short_eye


@pytest.mark.parametrize("x_dtype", ["float32", "int8", "bool"])
@pytest.mark.parametrize("out_dtype", ["float64", "int8", ml_dtypes.bfloat16])
@pytest.mark.parametrize("dtype", [None, "int8"])
def test_out_through_the_front_end(x_dtype: str, out_dtype: Any, dtype: Any) -> None:
    """The front end's part: ``eye_like(x, out=)`` passes ``dtype`` None on
    (``out``'s, not ``x``'s), and ``eye`` offers an ``out`` only without
    ``xp``. Where offered, the short path fills every ``out`` the general
    path fills (it takes the call) and each outcome is that path's."""
    x = np.empty((2, 3, 4), dtype=x_dtype)
    calls = [
        lambda o: eyelike.eye_like(x, k=1, dtype=dtype, out=o),
        lambda o: eyelike.eye(3, 4, batch_shape=2, k=-1, dtype=dtype, out=o),
        lambda o: eyelike.eye(3, 4, batch_shape=2, dtype=dtype, out=o, xp=np),
    ]
    for offered, call in zip((True, True, False), calls, strict=True):
        mine, theirs = (
            _make_out(x.shape, out_dtype, "C"),
            _make_out(x.shape, out_dtype, "C"),
        )
        answers: list[Any] = []

        def spy(*args: Any, answers: list[Any] = answers) -> Any:
            answers.append(_NUMPY_SHORT_EYE(DEFAULT, *args))
            return answers[-1]

        with mock.patch.object(NumPyBackend, "short_eye", side_effect=spy):
            short = _result(lambda: call(mine))  # noqa: B023
        general = _general(DEFAULT, lambda: call(theirs))  # noqa: B023
        assert short[0] == general[0]
        if short[0] == "raised":
            assert short[1] == general[1]
        assert _same_values(mine, theirs)
        taken = offered and general[0] == "returned"
        assert answers == ([mine] if taken else [None] if offered else [])


def test_out_short_path_declines_what_memory_cannot_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An ``out`` larger than this machine's memory (a view of a mapped
    file, say) is refused by the general path: so the short path declines."""
    from eyelike._validate import size

    out = np.zeros((4, 512, 512))
    assert _short(DEFAULT, (4, 512, 512), 0, None, None, None, out) is out
    monkeypatch.setattr(size, "physical_memory", lambda: 1 << 20)
    assert _short(DEFAULT, (4, 512, 512), 0, None, None, None, out) is None
    with pytest.raises(MemoryError, match="more than this machine's"):
        eyelike.eye(512, batch_shape=4, out=out)


@needs_torch
def test_the_front_end_offers_an_out_only_where_a_short_path_takes_one() -> None:
    """torch's and array-api-strict's short paths take no ``out``: the front
    end does not offer them one (nor pay for building the call)."""
    s = pytest.importorskip("array_api_strict")
    for out in (torch.zeros(2, 3, 3), s.zeros((2, 3, 3))):
        backend = backend_of_array(out)
        assert not backend._short_out
        with mock.patch.object(type(backend), "short_eye") as small:
            eyelike.eye(3, batch_shape=2, out=out)
            eyelike.eye_like(out, out=out)
        small.assert_not_called()
    assert DEFAULT._short_out


# ----------------------------------------------------------------- torch


@needs_torch
@fuzz(300)
@given(
    batch=batches,
    n_rows=counts,
    n_cols=st.none() | counts,
    k=offsets,
    dtype=dtypes | torch_dtypes,
)
def test_torch_eye_short_path_is_the_general_path(
    batch: tuple[Any, ...], n_rows: Any, n_cols: Any, k: Any, dtype: Any
) -> None:
    _compare_eye(n_rows, n_cols, k, dtype, batch, xp=torch)


# The devices a caller passes: x.device (a torch.device), names, odd ones.
torch_devices = (
    st.sampled_from(
        [None, "cpu", "meta", "cpu:0", "cuda", 0, -1]
        + [torch.device(d) for d in ("cpu", "cpu:0", "meta", "cuda")]
    )
    if torch
    else st.nothing()
) | hostile("device")


@needs_torch
@fuzz(300)
@given(
    batch=st.integers(-2, 5) | batches,
    n_rows=small_counts,
    k=offsets,
    dtype=st.none() | torch_dtypes,
    device=torch_devices,
)
def test_torch_eye_short_path_with_a_device_and_int_batch(
    batch: Any, n_rows: Any, k: Any, dtype: Any, device: Any
) -> None:
    _compare_eye(n_rows, None, k, dtype, batch, xp=torch, device=device)


@needs_torch
@fuzz(300)
@given(
    shape=st.lists(st.integers(0, 6), min_size=2, max_size=4).map(tuple)
    | st.sampled_from([(3, 3), (64, 32, 32), (1, 65536), (2, 32768, 1), (257, 256)]),
    source=sources,
    k=offsets,
    dtype=st.none() | torch_dtypes | hostile("dtype"),
    layout=st.sampled_from(["contiguous", "transposed", "expanded", "meta"]),
)
def test_torch_eye_like_short_path_is_the_general_path(
    shape: tuple[int, ...], source: Any, k: Any, dtype: Any, layout: str
) -> None:
    device = "meta" if layout == "meta" else None
    try:
        with warnings.catch_warnings():  # torch's notes on experimental types
            warnings.simplefilter("ignore")
            x = torch.empty(shape, dtype=source, device=device)
    except (RuntimeError, TypeError):
        return  # a dtype torch cannot make here
    if layout == "transposed":
        x = x.mT
    elif layout == "expanded":
        x = x[..., :1, :].expand(x.shape)
    _compare_eye_like(x, k, dtype)


@needs_torch
@fuzz(100)
@given(value=anything)
def test_torch_short_path_on_anything_in_each_position(value: Any) -> None:
    for args in ((value, 3, 0, None), (3, value, 0, None), (3, 3, value, None)):
        _compare_eye(*args, xp=torch)
    _compare_eye(3, 4, 1, value, xp=torch)
    _compare_eye(3, 4, 1, None, batch=(value,), xp=torch)
    _compare_eye_like(torch.empty(2, 3), value, None)
    _compare_eye_like(torch.empty(2, 3), 0, value)


@needs_torch
def test_torch_short_path_takes_the_common_calls() -> None:
    taken = [
        _compare_eye(3, None, 0, None, xp=torch),
        _compare_eye(4, 5, 1, torch.int32, batch=(2,), xp=torch),
        _compare_eye(4, None, 0, torch.uint16, xp=torch),
        _compare_eye_like(torch.empty(3, 3), 0, None),
        _compare_eye_like(torch.empty(64, 32, 32), 0, None),
        _compare_eye_like(torch.empty(64, 32, 32, dtype=torch.bfloat16), -3, None),
        # kornia's calls: x.device and x.dtype given, an int batch.
        _compare_eye(3, None, 0, torch.float32, xp=torch, device=torch.device("cpu")),
        _compare_eye(
            3, None, 0, torch.float64, 8, xp=torch, device=torch.device("cpu")
        ),
    ]
    assert all(taken)
    assert not _compare_eye_like(torch.empty(3, 3), torch.tensor(0), None)
    assert _compare_eye(300, 300, 0, None, xp=torch)  # larger, where memory holds it
    assert _compare_eye_like(torch.empty(2, 300, 300, dtype=torch.bool), -3, None)
    assert not _compare_eye_like(torch.empty(0, 3), 0, None)  # empty: general
    assert not _compare_eye_like(torch.empty(3), 0, None)  # rank 1: general
    assert not _compare_eye_like(torch.empty(()), 0, None)  # rank 0: general
    # Names, read once by the rules the general path reads them with:
    assert _compare_eye(3, None, 0, "float32", xp=torch)
    assert _compare_eye(3, None, 0, "int8", batch=(2,), xp=torch, device="cpu")
    assert _compare_eye(3, None, 0, None, xp=torch, device="meta")
    # what they cannot read, the general path says, in its words and order:
    assert not _compare_eye(3, None, 0, "float8", xp=torch)
    assert not _compare_eye(3, None, 0, None, xp=torch, device="no-such-device")
    assert not _compare_eye(3, None, 0, None, xp=torch, device=0)  # an index
    for hpu in ("hpu", torch.device("hpu")):  # no torch.hpu module here
        assert not _compare_eye(3, None, 0, None, xp=torch, device=hpu)


@needs_torch
def test_torch_short_path_on_the_edge_values() -> None:
    for value in EDGES:
        for args in ((value, 3, 0, None), (3, 3, value, None), (3, 3, 0, value)):
            _compare_eye(*args, xp=torch)
        _compare_eye_like(torch.empty(2, 2), value, None)
        _compare_eye_like(torch.empty(2, 2), 0, value)


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_a_vendored_array_api_compat_namespace_is_its_library(lib: str) -> None:
    """scikit-learn and SciPy vendor array-api-compat
    (``sklearn.externals.array_api_compat.numpy``): such a namespace is the
    library it wraps, and its small call takes the short path."""
    compat = pytest.importorskip(f"array_api_compat.{lib}")
    vendored = ModuleType(f"sklearn.externals.array_api_compat.{lib}")
    vendored.__dict__.update({k: v for k, v in vars(compat).items() if k != "__name__"})
    assert backend_of_namespace(vendored) is backend_of_namespace(compat)
    device = "cpu" if lib == "numpy" else torch.device("cpu")
    assert _compare_eye(3, None, 0, vendored.float64, xp=vendored, device=device)
    got = eyelike.eye(3, batch_shape=2, k=[0, 1], dtype=vendored.float32, xp=vendored)
    assert type(got) is type(vendored.zeros(1))


@fuzz(200)
@given(
    batch=st.just(()) | batches | st.integers(-2, 5),
    n_rows=small_counts,
    n_cols=st.none() | small_counts,
    k=offsets,
    # (name, value): a name of the library's to look up, or a raw value.
    dtype=st.tuples(
        st.just(True), st.sampled_from(["float64", "int8", "bool", "complex64"])
    )
    | st.tuples(st.just(False), st.none() | hostile("dtype")),
    device=st.tuples(st.just(True), st.sampled_from(["CPU_DEVICE", "device1"]))
    | st.tuples(st.just(False), st.sampled_from([None, "cpu"]) | hostile("device")),
)
def test_array_api_strict_short_path_is_the_general_path(
    batch: Any, n_rows: Any, n_cols: Any, k: Any, dtype: Any, device: Any
) -> None:
    s = pytest.importorskip("array_api_strict")
    dt = getattr(s, dtype[1]) if dtype[0] else dtype[1]
    dev = s.Device(device[1]) if device[0] else device[1]
    _compare_eye(n_rows, n_cols, k, dt, batch, xp=s, device=dev)


def test_array_api_strict_short_path_takes_the_common_call() -> None:
    s = pytest.importorskip("array_api_strict")
    cpu = s.Device("CPU_DEVICE")
    assert _compare_eye(3, None, 0, s.float64, xp=s, device=cpu)  # SciPy's
    assert _compare_eye(3, 4, -1, None, xp=s)
    assert not _compare_eye(3, None, 0, s.float64, xp=s, device=s.Device("device1"))
    assert not _compare_eye(3, None, 0, "float64", xp=s)  # a name: general
    assert _compare_eye(32, None, 1, s.float32, (64,), xp=s, device=cpu)
    assert _compare_eye(3, 4, -1, s.int8, 2, xp=s)  # an int batch
    assert not _compare_eye(3, None, 0, None, (2, 0), xp=s)  # empty: general
    assert not _compare_eye(1, None, 0, None, (1,) * 63, xp=s)  # too many dims


# --------------------------------------------------- one offset per matrix

# The offsets: small ones, ones past any matrix and past int64's range in a
# narrow type (cast with wrapping), of every integer type and a few others;
# the counts cross the builds' thresholds (mask, table, indices, put_).
per_matrix_values = st.lists(
    st.integers(-9, 9) | st.sampled_from([2**63 - 1, -(2**63), 300, -300]),
    max_size=6,
)
k_dtypes = st.sampled_from(
    ["int8", "int16", "int32", "int64", "uint8", "uint64", "bool", "float64"]
)
k_forms = st.sampled_from(["1-D", "column", "0-d"])
per_matrix_counts = st.integers(0, 40) | st.integers(-2, 2)


def _k_array(values: list[int], k_dtype: str, form: str) -> np.ndarray[Any, Any]:
    k = np.array(values, dtype=object).astype(np.int64 if values else k_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's notes on wrapping casts
        k = (
            k.astype(np.uint64).astype(k_dtype)
            if "int" in k_dtype
            else k.astype(k_dtype)
        )
    if form == "column":
        return k[:, None]
    return k[:1].reshape(()) if form == "0-d" and k.size else k


@fuzz(300)
@given(
    batch=batches | st.integers(-2, 9),
    n_rows=per_matrix_counts,
    n_cols=st.none() | per_matrix_counts,
    values=per_matrix_values,
    k_dtype=k_dtypes,
    form=k_forms,
    dtype=dtypes | st.sampled_from(["int8", "bool", "complex64", ml_dtypes.bfloat16]),
)
def test_per_matrix_short_path_is_the_general_path(
    batch: Any,
    n_rows: Any,
    n_cols: Any,
    values: list[int],
    k_dtype: str,
    form: str,
    dtype: Any,
) -> None:
    k = _k_array(values, k_dtype, form)
    _compare_eye(n_rows, n_cols, k, dtype, batch)
    if type(batch) is int or not all(type(d) is int and d > 0 for d in batch):
        return
    if type(n_rows) is int and n_rows > 0 and (n_cols is None or n_cols > 0):
        x = np.empty((*batch, n_rows, n_rows if n_cols is None else n_cols))
        _compare_eye_like(x, k, dtype)


@needs_torch
@fuzz(300)
@given(
    batch=batches | st.integers(-2, 9),
    n_rows=per_matrix_counts,
    n_cols=st.none() | per_matrix_counts,
    values=per_matrix_values,
    k_dtype=k_dtypes,
    form=k_forms,
    dtype=st.none() | torch_dtypes | hostile("dtype"),
    device=torch_devices,
)
def test_torch_per_matrix_short_path_is_the_general_path(
    batch: Any,
    n_rows: Any,
    n_cols: Any,
    values: list[int],
    k_dtype: str,
    form: str,
    dtype: Any,
    device: Any,
) -> None:
    k = torch.as_tensor(_k_array(values, k_dtype, form))
    _compare_eye(n_rows, n_cols, k, dtype, batch, xp=torch, device=device)
    if type(batch) is int or not all(type(d) is int and d > 0 for d in batch):
        return
    if type(n_rows) is int and n_rows > 0 and (n_cols is None or n_cols > 0):
        shape = (*batch, n_rows, n_rows if n_cols is None else n_cols)
        _compare_eye_like(torch.empty(shape), k, dtype)
        try:  # an x of that dtype, where torch makes one
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                x = torch.empty(shape, dtype=dtype)
        except Exception:  # (a hostile dtype's own error too)
            return
        _compare_eye_like(x, k, None)


def test_per_matrix_short_path_takes_the_common_calls() -> None:
    """A data loader's collate: one int64 offset per matrix, of the result's
    library, at every build's size (mask, table, indices)."""
    for batch, n in [((2,), 3), ((32,), 8), ((256,), 3), ((32,), 32), ((3, 4), 40)]:
        k = np.arange(np.prod(batch)).reshape(batch) % (2 * n + 1) - n
        assert _compare_eye(n, None, k, "float32", batch)
        assert _compare_eye(n, n + 1, k[..., :1], None, batch)  # broadcast
        assert _compare_eye_like(np.empty((*batch, n, n), "int8"), k, None)
        if torch is not None:
            t = torch.as_tensor(k)
            assert _compare_eye(n, None, t, torch.float32, batch, xp=torch)
            assert _compare_eye(n, n + 1, t.to(torch.int8), None, batch, xp=torch)
            assert _compare_eye_like(torch.empty(*batch, n, n), t, None)
    k = np.array([0, 1])
    assert not _compare_eye(3, None, k.astype(np.uint8), None, (2,))  # unsigned
    assert _compare_eye(3, None, k, None, (2,), device="cpu")  # NumPy's one device
    assert not _compare_eye(3, None, np.int64(1), None, (2,))  # one offset
    assert not _compare_eye(3, None, k[0], None, (2,))  # 0-d: one offset
    assert not _compare_eye(3, None, k, None, (3,))  # no broadcast: refused there
    assert not _compare_eye(3, None, k, None, (0, 2))  # empty: general
    if torch is not None:
        t = torch.tensor([0, 1])
        assert not _compare_eye(3, None, t.to(torch.uint8), None, (2,), xp=torch)
        assert not _compare_eye(3, None, t.float(), None, (2,), xp=torch)
        assert not _compare_eye(3, None, t, None, (2,), xp=torch, device="meta")
