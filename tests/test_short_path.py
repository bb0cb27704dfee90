"""The short path for one small NumPy matrix gives exactly what the general
path gives: the same array (values, dtype, shape, a fresh writeable one), or
the same exception with the same message, on every input the fuzzers make.

``eye`` and ``eye_like`` try ``_core._small_numpy_eye`` first and fall back
to the general path when it declines (returns None). Here both are called
directly on the same arguments, so a short path that accepted something the
general path refuses, or built a different array, fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from fuzz_strategies import EDGES, anything, fuzz, hostile
from hypothesis import given
from hypothesis import strategies as st

from eyelike import _core

# Mostly small counts, so the short path takes a good share of the inputs.
small_counts = st.integers(0, 300) | st.integers(-3, 3)
counts = small_counts | hostile("n_rows")
offsets = st.integers(-400, 400) | hostile("k")
dtypes = st.none() | hostile("dtype")


def _result(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "returned", call()
    except Exception as exc:  # the caller's own __index__ errors too
        return "raised", (type(exc), str(exc))


def _declined(short: tuple[str, Any]) -> bool:
    return short[0] == "returned" and short[1] is None


def _same(short: tuple[str, Any], general: tuple[str, Any]) -> None:
    assert short[0] == general[0], (short, general)
    if short[0] == "raised":
        assert short[1] == general[1]
        return
    a, b = short[1], general[1]
    assert type(a) is type(b) is np.ndarray
    assert (a.shape, a.dtype) == (b.shape, b.dtype)
    assert a.tobytes() == b.tobytes()
    assert a.flags.writeable
    assert a.flags.c_contiguous
    assert a.base is None


def _compare_eye(n_rows: Any, n_cols: Any, k: Any, dtype: Any) -> bool:
    """Compare the two paths of ``eye``; returns whether the short one ran."""
    cols = n_rows if n_cols is None else n_cols
    short = _result(lambda: _core._small_numpy_eye(n_rows, cols, k, dtype))
    if _declined(short):
        return False  # the general path alone decides
    general = _result(
        lambda: _core._general_eye(n_rows, n_cols, k, (), dtype, None, None, None, None)
    )
    _same(short, general)
    return True


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
    x = np.empty(shape, dtype=source)
    want = x.dtype if dtype is None else dtype
    short = _result(lambda: _core._small_numpy_eye(shape[0], shape[1], k, want))
    if _declined(short):
        return
    _same(short, _result(lambda: _core._general_eye_like(x, k, dtype, None)))


@fuzz(200)
@given(value=anything)
def test_short_path_on_anything_in_each_position(value: Any) -> None:
    for args in ((value, 3, 0, None), (3, value, 0, None), (3, 3, value, None)):
        _compare_eye(*args)
    _compare_eye(3, 4, 1, value)


def test_short_path_takes_the_common_calls() -> None:
    # Otherwise the comparisons above would prove nothing about it.
    taken = [
        _compare_eye(3, None, 0, None),
        _compare_eye(2, 5, -1, "int8"),
        _compare_eye(0, 7, 9, np.float32),
        _compare_eye(256, 256, 10**30, "bool"),
    ]
    assert all(taken)
    assert not _compare_eye(3, None, 0.0, None)  # a float k: general path
    assert not _compare_eye(1000, 1000, 0, None)  # too large: general path


def test_short_path_on_the_edge_values() -> None:
    for value in EDGES:
        for args in ((value, 3, 0, None), (3, 3, value, None), (3, 3, 0, value)):
            _compare_eye(*args)
