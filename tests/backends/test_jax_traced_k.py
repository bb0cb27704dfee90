"""A ``k`` traced by ``jax.jit`` (issue 45): one trace for every value, for
`eye` and `eye_like`, one offset or one per matrix, with or without a batch.

JAX traces a Python int argument of a jitted function as a 0-d integer
array: eyelike reads it as an array of JAX's (never its value), so a new
value is a new argument of the one compiled computation, not a retrace.
Counted twice: by the traced function's own counter and by the jitted
function's cache.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import reference

import eyelike

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "eye_like": lambda x, k: x + eyelike.eye_like(x, k=k),
    "eye": lambda x, k: (
        x + eyelike.eye(x.shape[-2], x.shape[-1], k=k, batch_shape=x.shape[:-2], xp=jnp)
    ),
}
# (The last: the largest int32, JAX's type for a traced Python int.)
SCALARS = (0, 1, 2, 3, 4, 5, 8, -1, -3, -4, -9, 2**31 - 1)
PER_MATRIX = ((0, 1, 2), (3, -1, 9), (-7, 0, 5), (4, 4, -4))


@pytest.mark.parametrize("batch", [(), (3,)], ids=["one matrix", "batch"])
@pytest.mark.parametrize("name", list(CALLS))
def test_one_trace_for_every_scalar_k(name: str, batch: tuple[int, ...]) -> None:
    traces: list[int] = []

    def fn(x: Any, k: Any) -> Any:
        traces.append(1)
        return CALLS[name](x, k)

    jitted = jax.jit(fn)
    x = jnp.zeros((*batch, 4, 5))
    for k in SCALARS:
        got = np.asarray(jitted(x, k))
        np.testing.assert_array_equal(got, reference(batch, 4, 5, k))
    assert len(traces) == 1, len(traces)
    assert jitted._cache_size() == 1


@pytest.mark.parametrize("name", list(CALLS))
def test_one_trace_for_every_per_matrix_k(name: str) -> None:
    traces: list[int] = []

    def fn(x: Any, k: Any) -> Any:
        traces.append(1)
        return CALLS[name](x, k)

    jitted = jax.jit(fn)
    x = jnp.zeros((3, 4, 5))
    for k in PER_MATRIX:
        got = np.asarray(jitted(x, jnp.asarray(k)))
        np.testing.assert_array_equal(got, reference((3,), 4, 5, list(k)))
    assert len(traces) == 1, len(traces)
    assert jitted._cache_size() == 1
