"""Fuzzing ``eyelike.eye``: each argument hostile in turn, all at once, a
hostile ``out=``, and every edge value in every argument. A correct result
or a clear error naming the argument, nothing else (see ``fuzz_oracle``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from helpers.fuzz_checks import (
    check_general_contract,
    expect_failure,
    outcome,
    run_and_check,
    snapshot,
)
from helpers.fuzz_namespaces import (
    NS_NAMES,
    STANDARD,
    default_dtype,
    kind_of,
    module_of,
    native_dtypes,
    torch,
    xs,
)
from helpers.fuzz_oracle import (
    MAYBE,
    Bad,
    MaybeNamed,
    Unjudged,
    batch_verdict,
    count_verdict,
    device_verdict,
    dtype_verdict,
    failed,
    k_is_array,
    k_verdict,
    xp_verdict,
)
from helpers.fuzz_oracle_outputs import expectation, out_verdict
from helpers.fuzz_strategies import (
    EDGE_INTS,
    EDGES,
    Index,
    edge_id,
    fuzz,
    hostile,
    outs,
)
from hypothesis import given, note
from hypothesis import strategies as st

import eyelike


@dataclass
class EyeCall:
    """Valid arguments for ``eye``; one of them is then made hostile."""

    ns: str
    n_rows: int
    n_cols: int | None
    batch: tuple[int, ...]
    k: int
    dtype: Any

    def call_with(self, param: str | None = None, value: Any = None) -> Any:
        """``eye`` on these arguments, ``param`` (if given) set to ``value``."""
        args: list[Any] = [self.n_rows, self.n_cols]
        xp = None if self.ns == "numpy" else module_of(self.ns)
        kwargs = {"k": self.k, "batch_shape": self.batch, "dtype": self.dtype}
        kwargs["xp"] = xp
        if param in ("n_rows", "n_cols"):
            args[param == "n_cols"] = value
        elif param is not None:
            kwargs[param] = value
        return lambda: eyelike.eye(*args, **kwargs)


@st.composite
def eye_calls(draw: st.DrawFn) -> EyeCall:
    ns = draw(st.sampled_from(NS_NAMES))
    names: list[Any] = [None]
    if ns == "numpy":
        names += [*STANDARD, "float16", "bfloat16", "float8_e4m3fn", ">f8", "<i4"]
    else:
        names += sorted(native_dtypes(ns))
    return EyeCall(
        ns=ns,
        n_rows=draw(st.integers(0, 6)),
        n_cols=draw(st.none() | st.integers(0, 6)),
        batch=tuple(draw(st.lists(st.integers(0, 3), max_size=2))),
        k=draw(st.integers(-8, 8) | st.sampled_from(EDGE_INTS)),
        dtype=draw(st.sampled_from(names)),
    )


EYE_PARAMS = ["n_rows", "n_cols", "k", "batch_shape", "dtype", "device", "xp"]


def eye_expectation(call: EyeCall, param: str, value: Any) -> Any:
    """What ``eye`` must do with ``call``'s arguments, ``param`` set to ``value``."""
    ns: Any = xp_verdict(value) if param == "xp" else call.ns
    rows: Any = count_verdict(value, "n_rows") if param == "n_rows" else call.n_rows
    cols: Any = call.n_cols
    if param == "n_cols":
        cols = None if value is None else count_verdict(value, "n_cols")
    batch: Any = batch_verdict(value) if param == "batch_shape" else call.batch
    for verdict in (ns, rows, cols, batch):
        if failed(verdict):
            return verdict
    device = device_verdict(value, ns) if param == "device" else None
    if failed(device):
        return device
    dtype = dtype_verdict(value if param == "dtype" else call.dtype, ns, device)
    if failed(dtype):
        # A valid device without the dtype (array-api-strict's "no_float64").
        return Bad((TypeError,), ("dtype",)) if param == "device" else dtype
    k = k_verdict(value, ns, batch) if param == "k" else call.k
    if failed(k):
        return k
    generic = ns in ("jax", "array_api_strict") or (
        ns == "torch" and param == "k" and k_is_array(value)
    )
    shape = (*batch, rows, rows if cols is None else cols)
    return expectation(ns, shape, dtype, k, generic=generic, device=device)


@fuzz(500)
@given(call=eye_calls(), param=st.sampled_from(EYE_PARAMS), data=st.data())
def test_eye_one_hostile_argument(
    call: EyeCall, param: str, data: st.DataObject
) -> None:
    if param == "xp":
        call.dtype = None  # a dtype name of one namespace may not exist in another
    value = data.draw(hostile(param), label=param)
    run_and_check(call.call_with(param, value), eye_expectation(call, param, value))


@fuzz(300)
@given(call=eye_calls(), data=st.data())
def test_eye_every_argument_hostile(call: EyeCall, data: st.DataObject) -> None:
    # All at once: the result must be right, or the error must name one of
    # the arguments the oracle finds wrong.
    defaults = {"n_cols": None, "k": 0, "batch_shape": (), "dtype": None}
    defaults |= {"device": None, "xp": None}
    values = {p: data.draw(hostile(p), label=p) for p in EYE_PARAMS}
    for p in defaults:  # about half of the arguments left at their default
        if data.draw(st.booleans(), label=f"default {p}"):
            values[p] = defaults[p]
    ns = xp_verdict(values["xp"])
    ns_ok = "numpy" if failed(ns) else ns
    rows = count_verdict(values["n_rows"], "n_rows")
    cols = values["n_cols"]
    cols = rows if cols is None else count_verdict(cols, "n_cols")
    batch = batch_verdict(values["batch_shape"])
    device = device_verdict(values["device"], ns_ok)
    dtype = dtype_verdict(values["dtype"], ns_ok, None if failed(device) else device)
    k = k_verdict(values["k"], ns_ok, batch if isinstance(batch, tuple) else ())
    verdicts = [ns, rows, cols, batch, device, dtype, k]
    note(f"verdicts: {verdicts!r}")
    kwargs = {p: values[p] for p in EYE_PARAMS[2:]}

    def run() -> Any:
        return eyelike.eye(values["n_rows"], values["n_cols"], **kwargs)

    if any(isinstance(v, Unjudged) for v in verdicts):
        check_general_contract(run)
        return
    failing = [v for v in verdicts if failed(v)]
    if not failing:
        generic = ns in ("jax", "array_api_strict") or (
            ns == "torch" and k_is_array(values["k"])
        )
        expected = expectation(
            ns, (*batch, rows, cols), dtype, k, generic=generic, device=device
        )
        run_and_check(run, expected)
        return
    if dtype == MAYBE:
        failing.append(MaybeNamed("dtype"))
    _, exc = outcome(run)
    expect_failure(exc, failing)


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("dtype", ("f4", "f4")),  # NumPy's (base, view) spelling of float32
        ("dtype", np.dtype(">f8")),
        ("dtype", "longdouble"),
        ("dtype", float),
        ("device", b"cpu"),  # torch.device(b"cpu") is the CPU
        ("device", "CPU"),
        ("batch_shape", range(2)),
        ("batch_shape", np.array([2, 1], dtype=object)),
        ("batch_shape", np.array(2, dtype=np.uint8)),
        ("k", [Index(1), np.int8(-1)]),
        ("k", np.array([2**64 - 1], dtype=np.uint64)),
        ("k", np.array(-1)),
        ("n_rows", np.array(3, dtype=np.uint8)),
        ("n_cols", Index(0)),
    ],
    ids=repr,
)
@pytest.mark.parametrize("ns", NS_NAMES[2:])
def test_eye_tricky_but_valid(ns: str, param: str, value: Any) -> None:
    # Odd inputs met while fuzzing, pinned: the oracle and eyelike agree.
    call = EyeCall(ns, 2, 3, (1,), 1, None)
    run_and_check(call.call_with(param, value), eye_expectation(call, param, value))


def _readmitted() -> list[Any]:
    # The inputs once left out of the fuzzers for bugs since fixed.
    values: list[Any] = [
        ("batch_shape", (0, 2**62, 2**62)),  # torch's strides overflow; JAX's fine
        ("batch_shape", (2**40, 0, 2**62)),
        ("batch_shape", (3, 0, 2**63 - 1, 2**63 - 1)),
        ("dtype", "a3"),  # NumPy reads it with a warning eyelike passed on
    ]
    if xs is not None:  # NumPy's dtype cache warned on strict's dtypes
        values += [("dtype", xs.float64), ("dtype", xs.int8)]
    if torch is not None:  # NumPy cannot hold a bfloat16 tensor
        values += [("k", [torch.tensor(1.0, dtype=torch.bfloat16)])]
    return values


@pytest.mark.parametrize(("param", "value"), _readmitted(), ids=repr)
@pytest.mark.parametrize("ns", NS_NAMES[2:])
def test_eye_once_excluded_inputs(ns: str, param: str, value: Any) -> None:
    # Judged by the oracle like any other input, on every namespace.
    call = EyeCall(ns, 2, 3, (1,), 1, None)
    expected = eye_expectation(call, param, value)
    assert not isinstance(expected, Unjudged), expected
    run_and_check(call.call_with(param, value), expected)


@pytest.mark.parametrize("value", EDGES, ids=edge_id)
@pytest.mark.parametrize("param", EYE_PARAMS)
def test_eye_edges(param: str, value: Any) -> None:
    # Every edge value in every argument, deterministically, by the oracle.
    call = EyeCall("numpy", 2, 3, (2,), 1, None)
    run_and_check(call.call_with(param, value), eye_expectation(call, param, value))


@fuzz(300)
@given(call=eye_calls(), data=st.data())
def test_eye_hostile_out(call: EyeCall, data: st.DataObject) -> None:
    # out= alone decides the namespace and dtype (xp, dtype, device unset):
    # a right fill, or a clear refusal with out bit-for-bit untouched.
    cols = call.n_rows if call.n_cols is None else call.n_cols
    shape = (*call.batch, call.n_rows, cols)
    out = data.draw(outs(shape), label="out")
    # out=None is the default: a fresh NumPy array of the default dtype.
    dtype = (
        default_dtype("numpy") if out is None else out_verdict(out, None, shape, None)
    )
    expected: Any = dtype
    if not failed(dtype):
        kind = kind_of(out) or "numpy"
        expected = expectation(kind, shape, dtype, call.k, generic=kind != "numpy")
    before = snapshot(out)
    result, exc = run_and_check(
        lambda: eyelike.eye(
            call.n_rows, call.n_cols, k=call.k, batch_shape=call.batch, out=out
        ),
        expected,
    )
    if exc is None:
        assert result is out or out is None
    else:
        assert snapshot(out) == before, "out was written by a failing call"
