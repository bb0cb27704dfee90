"""Fuzzing ``eyelike.onnx.eye_like`` (ONNX EyeLike-9): each of ``x``,
``dtype`` and ``k`` hostile in turn, and every edge value in each. The
oracle below follows the operator's specification: ``x`` of rank 2 and one
of the twelve types, ``dtype`` a TensorProto enum int, ``k`` an int64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.fuzz_checks import run_and_check
from helpers.fuzz_namespaces import (
    INT64_MAX,
    INT64_MIN,
    NS_NAMES,
    dtype_name,
    has_dtype,
    kind_of,
    module_of,
    native_dtypes,
)
from helpers.fuzz_oracle import Bad, integer_scalar
from helpers.fuzz_oracle_outputs import expectation
from helpers.fuzz_strategies import (
    EDGES,
    anything,
    edge_id,
    fuzz,
    ints,
    np_arrays,
    np_scalars,
    other_arrays,
)
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import eyelike

ONNX_TYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16"}
ONNX_TYPES |= {6: "int32", 7: "int64", 9: "bool", 10: "float16", 11: "float64"}
ONNX_TYPES |= {12: "uint32", 13: "uint64"}


@st.composite
def onnx_inputs(draw: st.DrawFn) -> Any:
    """A valid EyeLike-9 input: rank 2, one of the twelve types."""
    ns = draw(st.sampled_from(NS_NAMES))
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=5))
    if ns == "numpy":
        dt = draw(st.sampled_from([*ONNX_TYPES.values(), ">f4", ">i8"]))
        return np.zeros(shape, dtype=dt)
    table = native_dtypes(ns)
    name = draw(st.sampled_from([n for n in ONNX_TYPES.values() if n in table]))
    return module_of(ns).zeros(shape, dtype=table[name])


def onnx_expectation(x: Any, dtype: Any, k: Any) -> Any:
    """What ``eyelike.onnx.eye_like(x, dtype=dtype, k=k)`` must do."""
    kind = kind_of(x)
    if kind is None:
        return Bad((TypeError,), ("x",))
    if x.ndim != 2:
        return Bad((ValueError,), ("x",))
    if dtype_name(x.dtype) not in ONNX_TYPES.values():
        return Bad((TypeError,), ("x",))
    if not integer_scalar(k):
        return Bad((TypeError,), ("k",))
    if not INT64_MIN <= int(k) <= INT64_MAX:
        return Bad((ValueError,), ("k",))
    if dtype is None:
        want: Any = x.dtype if kind == "numpy" else dtype_name(x.dtype)
    else:
        bad = Bad((TypeError,), ("dtype",))
        if not integer_scalar(dtype):
            return bad
        name = ONNX_TYPES.get(int(dtype))
        if name is None or not has_dtype(kind, name):
            return bad
        want = np.dtype(name) if kind == "numpy" else name
    return expectation(kind, tuple(x.shape), want, int(k), generic=kind != "numpy")


ONNX_PARAMS = ["x", "dtype", "k"]


@fuzz(250)
@given(x=onnx_inputs(), param=st.sampled_from(ONNX_PARAMS), data=st.data())
def test_onnx_one_hostile_argument(x: Any, param: str, data: st.DataObject) -> None:
    args: dict[str, Any] = {
        "x": x,
        "dtype": data.draw(st.none() | st.sampled_from(sorted(ONNX_TYPES))),
        "k": data.draw(
            st.integers(-8, 8) | st.sampled_from([INT64_MAX, INT64_MIN, 2**31])
        ),
    }
    plausible = {
        "x": np_arrays | other_arrays,
        "dtype": st.integers(-2, 30) | ints,
        "k": ints | np_scalars,
    }
    args[param] = data.draw(anything | plausible[param], label=param)
    expected = onnx_expectation(args["x"], args["dtype"], args["k"])
    run_and_check(
        lambda: eyelike.onnx.eye_like(args["x"], dtype=args["dtype"], k=args["k"]),
        expected,
    )


@pytest.mark.parametrize("value", EDGES, ids=edge_id)
@pytest.mark.parametrize("param", ONNX_PARAMS)
def test_onnx_edges(param: str, value: Any) -> None:
    args: dict[str, Any] = {"x": np.zeros((2, 3), np.int32), "dtype": None, "k": 1}
    args[param] = value
    expected = onnx_expectation(args["x"], args["dtype"], args["k"])
    run_and_check(lambda: eyelike.onnx.eye_like(**args), expected)
