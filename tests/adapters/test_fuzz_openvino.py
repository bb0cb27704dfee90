"""Fuzzing ``eyelike.openvino.eye`` (OpenVINO Eye-9): each of its five
inputs hostile in turn, and every edge value in each. The oracle below
follows the operator's specification: ``T_NUM`` inputs are int32/int64
scalars or 1-element arrays, ``batch_shape`` a 1-D int32/int64 array or a
sequence of counts, ``output_type`` one of OpenVINO's element type names."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import to_numpy
from helpers.fuzz_checks import run_and_check
from helpers.fuzz_namespaces import (
    INT64_MAX,
    INT64_MIN,
    dtype_name,
    has_dtype,
    kind_of,
    ml_dtypes,
    to_torch,
)
from helpers.fuzz_oracle import Bad, failed, integer_scalar
from helpers.fuzz_oracle_outputs import expectation
from helpers.fuzz_strategies import EDGES, anything, edge_id, fuzz, ints, np_scalars
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import eyelike

OV_TYPES = {"boolean": "bool", "bf16": "bfloat16", "f16": "float16"}
OV_TYPES |= {"f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16"}
OV_TYPES |= {"i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16"}
OV_TYPES |= {"u32": "uint32", "u64": "uint64"}
OV_EVERYWHERE = ["boolean", "f32", "i8", "i16", "i32", "u8", "u16", "u32"]


def t_num_verdict(v: Any, name: str, *, count: bool) -> Any:
    """An Eye-9 ``T_NUM`` input: (value, namespace or None), or the failure."""
    bad_type, bad_value = Bad((TypeError,), (name,)), Bad((ValueError,), (name,))
    kind = None
    if isinstance(v, (bool, np.bool_)):
        return bad_type
    if isinstance(v, int):
        value = int(v)
    elif isinstance(v, np.generic):
        if v.dtype.name not in ("int32", "int64"):
            return bad_type
        value = int(v)
    elif hasattr(v, "shape"):
        kind = kind_of(v)
        if kind is None or dtype_name(v.dtype) not in ("int32", "int64"):
            return bad_type
        if tuple(v.shape) not in ((), (1,)):
            return bad_value
        value = int(to_numpy(v).reshape(-1)[0])
    else:
        return bad_type
    low = 0 if count else INT64_MIN
    return (value, kind) if low <= value <= INT64_MAX else bad_value


def ov_batch_verdict(v: Any) -> Any:
    """Eye-9's ``batch_shape``: (dims, namespace or None), or the failure."""
    name = "batch_shape"
    kind = None
    if v is None:
        return (), None
    if isinstance(v, (list, tuple)):
        items = list(v)
    elif hasattr(v, "shape") and not isinstance(v, np.generic):
        kind = kind_of(v)
        if kind is None or dtype_name(v.dtype) not in ("int32", "int64"):
            return Bad((TypeError,), (name,))
        if len(v.shape) != 1 or not isinstance(v.shape[0], int):
            return Bad((ValueError,), (name,))  # not 1-D, or of unknown size
        items = list(to_numpy(v).tolist())
    else:
        return Bad((TypeError,), (name,))
    dims = []
    for item in items:
        if not integer_scalar(item):
            return Bad((TypeError,), (name,))
        if not 0 <= int(item) <= INT64_MAX:
            return Bad((ValueError,), (name,))
        dims.append(int(item))
    return tuple(dims), kind


def ov_expectation(args: dict[str, Any]) -> Any:
    """What ``eyelike.openvino.eye(**args)`` must do."""
    ot = args["output_type"]
    if not isinstance(ot, str) or ot not in OV_TYPES:
        return Bad((TypeError,), ("output_type",))
    rows = t_num_verdict(args["num_rows"], "num_rows", count=True)
    cols = t_num_verdict(args["num_columns"], "num_columns", count=True)
    k = t_num_verdict(args["diagonal_index"], "diagonal_index", count=False)
    batch = ov_batch_verdict(args["batch_shape"])
    for verdict in (rows, cols, k, batch):
        if failed(verdict):
            return verdict
    kinds = {kind for _, kind in (rows, cols, k, batch) if kind is not None}
    if len(kinds) > 1:  # pragma: no cover - one hostile argument at a time
        return Bad((TypeError,), ("namespace",))
    ns = kinds.pop() if kinds else "numpy"
    name = OV_TYPES[ot]
    if not has_dtype(ns, name):
        return Bad((TypeError,), ("output_type",))
    dtype: Any = name
    if ns == "numpy":
        dtype = np.dtype(getattr(ml_dtypes, name) if name == "bfloat16" else name)
    shape = (*batch[0], rows[0], cols[0])
    return expectation(ns, shape, dtype, k[0], generic=ns != "numpy")


OV_PARAMS = ["num_rows", "num_columns", "diagonal_index", "batch_shape"]
OV_PARAMS += ["output_type"]


@fuzz(300)
@given(param=st.sampled_from(OV_PARAMS), data=st.data())
def test_openvino_one_hostile_argument(param: str, data: st.DataObject) -> None:
    args: dict[str, Any] = {
        "num_rows": data.draw(st.integers(0, 6)),
        "num_columns": data.draw(st.integers(0, 6)),
        "diagonal_index": data.draw(
            st.integers(-8, 8) | st.sampled_from([INT64_MAX, INT64_MIN])
        ),
        "batch_shape": data.draw(st.none() | st.lists(st.integers(0, 3), max_size=2)),
        "output_type": data.draw(st.sampled_from(OV_EVERYWHERE)),
    }
    t_num_arrays = st.sampled_from(["int32", "int64", "int16", "uint64"]).flatmap(
        lambda n: hnp.arrays(
            np.dtype(n),
            st.sampled_from([(), (1,), (2,)]),
            elements=st.integers(0 if n.startswith("u") else -2, 6),
        )
    )
    plausible = {
        "num_rows": ints | t_num_arrays | t_num_arrays.map(to_torch) | np_scalars,
        "num_columns": ints | t_num_arrays | np_scalars,
        "diagonal_index": ints | t_num_arrays | np_scalars,
        "batch_shape": st.lists(ints | np_scalars | st.booleans(), max_size=3)
        | t_num_arrays,
        "output_type": st.sampled_from([*OV_TYPES, "u1", "i4", "nf4", "f8e4m3", "x"]),
    }
    args[param] = data.draw(anything | plausible[param], label=param)
    run_and_check(
        lambda: eyelike.openvino.eye(
            args["num_rows"],
            args["num_columns"],
            args["diagonal_index"],
            args["batch_shape"],
            output_type=args["output_type"],
        ),
        ov_expectation(args),
    )


@pytest.mark.parametrize("value", EDGES, ids=edge_id)
@pytest.mark.parametrize("param", OV_PARAMS)
def test_openvino_edges(param: str, value: Any) -> None:
    args: dict[str, Any] = {"num_rows": 2, "num_columns": 3, "diagonal_index": 1}
    args |= {"batch_shape": [2], "output_type": "f32"}
    args[param] = value
    run_and_check(lambda: eyelike.openvino.eye(**args), ov_expectation(args))
