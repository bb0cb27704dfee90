"""The backends' short paths for the common small call give exactly what the
general path gives: the same array (values, dtype, shape, device, a fresh
contiguous one), or the same exception with the same message, on every input
the fuzzers make.

``eye`` and ``eye_like`` try ``Backend.small_eye`` first, the one hook
through which the front end offers it (NumPy's, torch's and
array-api-strict's answer; the others always decline) and fall back to the general
path when it declines (returns None). Here both are called on the same
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
from hypothesis import given
from hypothesis import strategies as st

import eyelike
from eyelike._backends import DEFAULT, backend_of_array, backend_of_namespace
from eyelike._backends._base import Backend

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


def _declined(short: tuple[str, Any]) -> bool:
    return short[0] == "returned" and short[1] is None


def _general(backend: Backend, call: Callable[[], Any]) -> tuple[str, Any]:
    """``call`` with ``backend``'s short path declining everything."""
    with mock.patch.object(type(backend), "small_eye", return_value=None):
        return _result(call)


def _same(short: tuple[str, Any], general: tuple[str, Any]) -> None:
    assert short[0] == general[0], (short, general)
    if short[0] == "raised":
        assert short[1] == general[1]
        return
    a, b = short[1], general[1]
    assert type(a) is type(b)
    if type(a).__module__.startswith("array_api_strict"):
        assert (a.shape, a.dtype, a.device) == (b.shape, b.dtype, b.device)
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
        return
    if type(a) is np.ndarray:
        assert (a.shape, a.dtype) == (b.shape, b.dtype)
        assert a.tobytes() == b.tobytes()
        assert a.flags.writeable
        assert a.flags.c_contiguous
        assert a.base is None
        return
    assert (a.shape, a.dtype, a.device) == (b.shape, b.dtype, b.device)
    assert type(a.shape) is type(b.shape)
    assert a.is_contiguous()
    assert b.is_contiguous()
    assert a._base is None
    assert b._base is None
    assert not a.requires_grad
    if a.device.type != "meta":  # a meta tensor has no values
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
    short = _result(lambda: backend.small_eye(shape, k, dtype, None, device))
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
    short = _result(lambda: backend.small_eye(None, k, want, x, None))
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
def test_short_path_on_anything_in_each_position(value: Any) -> None:
    for args in ((value, 3, 0, None), (3, value, 0, None), (3, 3, value, None)):
        _compare_eye(*args)
    _compare_eye(3, 4, 1, value)
    _compare_eye(3, 4, 1, None, device=value)
    _compare_eye(3, 4, 1, None, batch=value)
    if torch is not None:
        _compare_eye(3, 4, 1, None, xp=torch, device=value)
        _compare_eye(3, 4, 1, None, xp=torch, batch=value)


def test_short_path_takes_the_common_calls() -> None:
    # Otherwise the comparisons above would prove nothing about it.
    taken = [
        _compare_eye(3, None, 0, None),
        _compare_eye(2, 5, -1, "int8"),
        _compare_eye(0, 7, 9, np.float32),
        _compare_eye(256, 256, 10**30, "bool"),
        _compare_eye_like(np.empty((3, 3)), 0, None),
    ]
    assert all(taken)
    assert not _compare_eye(3, None, 0.0, None)  # a float k: general path
    assert _compare_eye(1000, 1000, 0, None)  # larger, where memory holds it
    assert _compare_eye(300, None, -2, "int8", batch=(2,))
    assert _compare_eye(3, None, 1, None, batch=(2,))  # a small batch
    assert _compare_eye(3, None, -1, "int8", batch=4)
    assert _compare_eye(3, None, 0, None, batch=(0, 2))
    assert not _compare_eye(3, None, [0, 1], None, batch=(2,))  # per-matrix k
    assert not _compare_eye(10**6, None, 0, None, batch=(0,))  # empty: general
    assert not _compare_eye(1, None, 0, None, batch=(1,) * 63)  # too many dims
    assert _compare_eye(3, None, 0, "float64", device="cpu")  # NumPy's one device
    assert not _compare_eye(3, None, 0, None, device="gpu")
    assert not _compare_eye_like(np.empty(3), 0, None)  # rank 1: general
    assert _compare_eye_like(np.empty((2, 3, 3)), 0, None)  # a small batch
    assert not _compare_eye_like(np.empty((300, 3, 3)), [0] * 300, None)
    assert DEFAULT.small_eye((3, 3), 0, None, None, None) is not None


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
    assert _compare_eye(256, None, 0, "float64", batch=(2,))  # 1 MiB: fits


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
@pytest.mark.parametrize("k", [2**70, -(2**63) - 5, 2**63, 601, -601])
def test_torch_short_path_offsets_beyond_a_large_matrix(k: int) -> None:
    """Bug (found in review): a larger output took the short path with the
    caller's own k, and torch's diagonal() of a matrix over 2**18 elements
    overflowed past int64 where the general path (k clamped) gave zeros."""
    x = torch.empty(2, 600, 600)
    assert _compare_eye_like(x, k, None)
    assert _compare_eye(600, None, k, torch.float32, batch=(2,), xp=torch)
    assert not eyelike.eye_like(x, k=k).any()


@needs_torch
@pytest.mark.parametrize("n", [1, 300])
def test_torch_short_path_keeps_the_batch_rank_limit(n: int) -> None:
    """Bug (found in review): torch's short path took 63 batch dimensions,
    which the general path refuses (NumPy's holds at most 64)."""
    with pytest.raises(ValueError, match="63 dimensions"):
        eyelike.eye(n, batch_shape=(1,) * 63, xp=torch)
    assert eyelike.eye(n, batch_shape=(1,) * 62, xp=torch).ndim == 64


def test_short_path_on_the_edge_values() -> None:
    for value in EDGES:
        for args in ((value, 3, 0, None), (3, 3, value, None), (3, 3, 0, value)):
            _compare_eye(*args)


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
    assert not _compare_eye(3, None, 0, "float32", xp=torch)  # a name: general


@needs_torch
def test_torch_default_dtype_is_read_on_every_call() -> None:
    # Regression: the default was cached, so torch.set_default_dtype was
    # ignored after the first call. Both paths, then the general one again.
    before = torch.get_default_dtype()
    try:
        for want in (torch.float64, torch.float32, torch.float64):
            torch.set_default_dtype(want)
            assert eyelike.eye(2, xp=torch).dtype == want
            assert eyelike.eye(2, xp=torch, device="cpu").dtype == want  # general
    finally:
        torch.set_default_dtype(before)


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
    n_rows: Any, n_cols: Any, k: Any, dtype: Any, device: Any
) -> None:
    s = pytest.importorskip("array_api_strict")
    dt = getattr(s, dtype[1]) if dtype[0] else dtype[1]
    dev = s.Device(device[1]) if device[0] else device[1]
    _compare_eye(n_rows, n_cols, k, dt, xp=s, device=dev)


def test_array_api_strict_short_path_takes_the_common_call() -> None:
    s = pytest.importorskip("array_api_strict")
    cpu = s.Device("CPU_DEVICE")
    assert _compare_eye(3, None, 0, s.float64, xp=s, device=cpu)  # SciPy's
    assert _compare_eye(3, 4, -1, None, xp=s)
    assert not _compare_eye(3, None, 0, s.float64, xp=s, device=s.Device("device1"))
    assert not _compare_eye(3, None, 0, "float64", xp=s)  # a name: general
