"""Fuzzing ``eyelike.eye_like``: each of ``x``, ``k``, ``dtype`` and ``out``
hostile in turn. A correct result or a clear error naming the argument,
nothing else (see ``fuzz_oracle``); a failing call leaves ``out`` untouched."""

from __future__ import annotations

from typing import Any

import numpy as np
from helpers.fuzz_checks import run_and_check, snapshot
from helpers.fuzz_namespaces import (
    NS_NAMES,
    STANDARD,
    kind_of,
    module_of,
    native_dtypes,
)
from helpers.fuzz_oracle import (
    MAYBE,
    Bad,
    dtype_verdict,
    failed,
    k_is_array,
    k_verdict,
)
from helpers.fuzz_oracle_outputs import expectation, out_verdict
from helpers.fuzz_strategies import (
    anything,
    fuzz,
    hostile,
    np_arrays,
    other_arrays,
    outs,
    sharded,
)
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import eyelike


@st.composite
def like_inputs(draw: st.DrawFn) -> Any:
    """A valid ``x`` for ``eye_like``: rank 2 or 3, a numeric dtype."""
    ns = draw(st.sampled_from(NS_NAMES))
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=0, max_side=4))
    if ns == "numpy":
        dt = draw(st.sampled_from([*STANDARD, "float16", ">f4", "<i2"]))
        return np.zeros(shape, dtype=dt)
    name = draw(st.sampled_from(sorted(native_dtypes(ns))))
    x = module_of(ns).zeros(shape, dtype=native_dtypes(ns)[name])
    if ns == "jax" and draw(st.booleans()):  # over every device
        x = sharded(x, along_first=draw(st.booleans()))
    return x


def x_verdict(x: Any, dtype_given: bool) -> Any:
    """``x``: its namespace, or the failure."""
    kind = kind_of(x)
    if kind is None:
        return Bad((TypeError,), ("x",))
    if x.ndim < 2:
        return Bad((ValueError,), ("x",))
    if not dtype_given:
        resolved = dtype_verdict(x.dtype, kind)
        if failed(resolved) or resolved == MAYBE:
            return Bad((TypeError,), ("dtype", "x"))
    return kind


def like_expectation(x: Any, kwargs: dict[str, Any]) -> Any:
    """What ``eye_like(x, **kwargs)`` must do."""
    ns = x_verdict(x, "dtype" in kwargs)
    if failed(ns):
        return ns
    shape = tuple(x.shape)
    out = kwargs.get("out")
    if out is not None:
        dtype = out_verdict(out, ns, shape, None)
    else:
        given_dtype = kwargs.get("dtype")
        dtype = dtype_verdict(x.dtype if given_dtype is None else given_dtype, ns)
    ks = k_verdict(kwargs["k"], ns, shape[:-2]) if "k" in kwargs else 0
    failures = [v for v in (dtype, ks) if failed(v)]
    if failures:
        return failures[0]
    generic = ns in ("jax", "array_api_strict") or (
        ns == "torch" and k_is_array(kwargs.get("k", 0))
    )
    return expectation(ns, shape, dtype, ks, generic=generic)


LIKE_PARAMS = ["x", "k", "dtype", "out"]


@fuzz(300)
@given(x=like_inputs(), param=st.sampled_from(LIKE_PARAMS), data=st.data())
def test_eye_like_one_hostile_argument(x: Any, param: str, data: st.DataObject) -> None:
    kwargs: dict[str, Any] = {}
    if param == "out":
        value = data.draw(outs(tuple(x.shape)), label="out")
    elif param == "x":
        value = data.draw(anything | np_arrays | other_arrays, label="x")
    else:
        value = data.draw(hostile(param), label=param)
    if param == "x":
        x = value
    else:
        kwargs[param] = value
    before = snapshot(value) if param == "out" else b""
    _, exc = run_and_check(
        lambda: eyelike.eye_like(x, **kwargs), like_expectation(x, kwargs)
    )
    if param == "out" and exc is not None:
        assert snapshot(value) == before, "out was written by a failing call"
