"""Hypothesis: random shapes, offsets (far beyond int64) and dtypes against
the rule evaluated with Python ints, and against ``np.eye``."""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

import numpy as np
from helpers import dtype_names, reference, to_numpy
from hypothesis import given, settings
from hypothesis import strategies as st

import eyelike

dims = st.integers(0, 6)
huge = st.sampled_from([2**31, 2**32, 2**63 - 1, 2**63, 2**64, 10**40])
offsets = st.one_of(
    st.integers(-8, 8), huge, huge.map(lambda v: -v), st.integers(-(2**70), 2**70)
)
batches = st.lists(st.integers(0, 3), max_size=3).map(tuple)


@settings(max_examples=300, deadline=None)
@given(n_rows=dims, n_cols=dims, k=offsets, dtype=st.sampled_from(dtype_names(np)))
def test_numpy_matrix(n_rows: int, n_cols: int, k: int, dtype: str) -> None:
    result = eyelike.eye(n_rows, n_cols, k=k, dtype=dtype)
    assert result.shape == (n_rows, n_cols)
    assert result.flags.c_contiguous
    np.testing.assert_array_equal(
        to_numpy(result).astype(np.complex128), reference((), n_rows, n_cols, k)
    )
    if abs(k) < 2**62:
        np.testing.assert_array_equal(to_numpy(result), np.eye(n_rows, n_cols, k=k))


@settings(max_examples=200, deadline=None)
@given(
    batch=batches,
    n_rows=dims,
    n_cols=dims,
    data=st.data(),
)
def test_numpy_batched_per_matrix_k(
    batch: tuple[int, ...], n_rows: int, n_cols: int, data: st.DataObject
) -> None:
    # k of any shape that broadcasts to the batch (dims dropped or set to 1).
    k_shape = tuple(
        data.draw(st.sampled_from([d, 1])) for d in batch[len(batch) // 2 :]
    )
    n = int(np.prod(k_shape))
    ks = data.draw(st.lists(offsets, min_size=n, max_size=n))
    k: Any = np.array(ks, dtype=object).reshape(k_shape).tolist() if k_shape else ks[0]
    if n == 0:  # an empty nested list would lose its shape
        k = np.zeros(k_shape, dtype=np.int64)
    use_out = data.draw(st.booleans())
    shape = (*batch, n_rows, n_cols)
    out = np.full(shape, 9, dtype=np.int32) if use_out else None
    result = eyelike.eye(n_rows, n_cols, k=k, batch_shape=batch, out=out, dtype="int32")
    assert result.shape == shape
    np.testing.assert_array_equal(result, reference(batch, n_rows, n_cols, k))


def _backends() -> list[Any]:
    mods: list[Any] = []
    for name in ("array_api_strict", "torch", "jax.numpy"):
        with contextlib.suppress(ImportError):
            mods.append(importlib.import_module(name))
    return mods


@settings(max_examples=150, deadline=None)
@given(
    xp=st.sampled_from(_backends() or [np]),
    batch=batches,
    n_rows=dims,
    n_cols=dims,
    k=offsets,
    data=st.data(),
)
def test_other_namespaces(
    xp: Any,
    batch: tuple[int, ...],
    n_rows: int,
    n_cols: int,
    k: int,
    data: st.DataObject,
) -> None:
    dtype = data.draw(st.sampled_from(dtype_names(xp)))
    per_matrix = data.draw(st.booleans()) and len(batch) > 0
    if per_matrix:
        ks = data.draw(st.lists(offsets, min_size=batch[-1], max_size=batch[-1]))
        k_arg: Any = ks
    else:
        k_arg = k
    result = eyelike.eye(n_rows, n_cols, k=k_arg, batch_shape=batch, dtype=dtype, xp=xp)
    assert tuple(result.shape) == (*batch, n_rows, n_cols)
    np.testing.assert_array_equal(
        to_numpy(result).astype(np.complex128),
        reference(batch, n_rows, n_cols, k_arg),
    )
