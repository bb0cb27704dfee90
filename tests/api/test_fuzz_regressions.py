"""Regression tests for the bugs the fuzzers found, one test each (all are
fixed; the inputs that found them are fuzzed again like any other), and the
check that every input the fuzz oracle leaves unjudged has a stated reason."""

from __future__ import annotations

import contextlib
import importlib.util
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import HAS_GPU
from helpers.fuzz_checks import ALLOWED, names, run_cli
from helpers.fuzz_namespaces import da, dtype_name, jnp, torch, xs
from helpers.fuzz_oracle import UNJUDGED_REASONS
from helpers.fuzz_strategies import BadIndex

import eyelike


def _named_error(call: Callable[[], Any]) -> BaseException | None:
    """The allowed exception ``call`` raises, or None if it succeeds."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            call()
        except ALLOWED as exc:
            return exc
    return None


def test_bug_batch_shape_array_without_tolist() -> None:
    result = eyelike.eye(2, batch_shape=xs.asarray([3, 1]))
    assert result.shape == (3, 1, 2, 2)


@pytest.mark.parametrize(
    "k",
    [
        [np.array([1, 2]), np.array([1])],
        [np.array(1.5)],
        [BadIndex()],
        [torch.tensor(1.5)] if torch is not None else [BadIndex()],
        [np.array([3]), 0],
        [torch.tensor([3]), 0] if torch is not None else [np.array([3]), 0],
    ],
    ids=[
        "ragged arrays",
        "0-D float array",
        "BadIndex",
        "float tensor",
        "array beside an int",
        "tensor beside an int",
    ],
)
def test_bug_k_sequence_leaf_messages(k: Any) -> None:
    exc = _named_error(lambda: eyelike.eye(2, batch_shape=len(k), k=k))
    assert isinstance(exc, TypeError)
    assert names("k", str(exc)), str(exc)


@pytest.mark.parametrize(
    "dtype",
    [
        ",",
        "i4,,",
        " E,dU:dBL",
        {"names": ["a"], "formats": ["f4"], "offsets": [2**70]},
        torch.tensor(2.5) if torch is not None else ",",  # str(): "tensor(2.5000)"
    ],
    ids=repr,
)
def test_bug_numpy_dtype_parser_errors(dtype: Any) -> None:
    exc = _named_error(lambda: eyelike.eye(2, dtype=dtype))
    assert isinstance(exc, TypeError)
    assert "dtype" in str(exc)


@pytest.mark.parametrize(
    "form",
    ["tuple", "tuple after a datetime", "field list", "fields dict", "nested"],
)
@pytest.mark.parametrize("ns", ["numpy", "torch", "jax", "array_api_strict"])
def test_bug_array_inside_a_dtype_spec(form: str, ns: str) -> None:
    """Bug (found by the fuzzer in CI): an array inside a tuple given as a
    dtype was read by NumPy as a dtype, JAX's with a DeprecationWarning that
    eyelike passed on (and ``(np.float32, array)`` was taken as float32).
    Every form NumPy reads a dtype from is refused, silently, as a value."""
    value = jnp.array(0.0) if jnp is not None else np.array(0.0)
    spec = {
        "tuple": (np.float32, value),
        "tuple after a datetime": (np.datetime64("NaT", "Y"), value),
        "field list": [("a", value)],
        "fields dict": {"names": ["a"], "formats": [value]},
        "nested": [("a", [("b", (np.float32, value))])],
    }[form]
    xp = {"numpy": np, "torch": torch, "jax": jnp}.get(ns)
    if ns == "array_api_strict":
        xp = pytest.importorskip("array_api_strict")
    if xp is None:
        pytest.skip(f"needs {ns}")
    exc = _named_error(lambda: eyelike.eye(2, dtype=spec, xp=xp))
    assert isinstance(exc, TypeError)
    assert "not a value" in str(exc)


def test_bug_oracle_array_beside_a_hostile_index_in_a_dtype_spec() -> None:
    """Bug of the fuzz oracle (found in a full run): ``{'': (array,
    BoomIndex())}`` as a dtype, which eyelike refuses as a value before NumPy
    reads it, was expected to raise the caller's own error from NumPy asking
    its ``__index__``: the oracle looked for an array at the top level only."""
    from helpers.fuzz_oracle import Bad, dtype_verdict
    from helpers.fuzz_strategies import BoomIndex

    spec = {"": (np.array(-2 + 0j), BoomIndex())}
    assert isinstance(dtype_verdict(spec, "numpy"), Bad)
    exc = _named_error(lambda: eyelike.eye_like(np.zeros((0, 0), bool), dtype=spec))
    assert isinstance(exc, TypeError)
    assert "not a value" in str(exc)


@pytest.mark.parametrize("device", ["mps", "xla"])
def test_bug_torch_unavailable_device(device: str) -> None:
    exc = _named_error(lambda: eyelike.eye(2, xp=torch, device=device))
    assert isinstance(exc, ValueError)
    assert "device" in str(exc)


def test_bug_numpy_device_array_message() -> None:
    exc = _named_error(lambda: eyelike.eye(2, device=np.array([1, 2])))
    assert isinstance(exc, ValueError)
    assert names("device", str(exc)), str(exc)


@pytest.mark.parametrize("pair", ["numpy dtype, strict", "strict dtype, jax"])
def test_bug_foreign_dtype_comparison_warnings(pair: str) -> None:
    # Recorded, not raised: under "error" the comparison loop swallows them.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if pair.endswith("strict"):
            result = eyelike.eye(2, xp=xs, dtype=np.float32)
            assert dtype_name(result.dtype) == "float32"
        else:
            with contextlib.suppress(TypeError):  # no float32? fine
                eyelike.eye(2, xp=jnp, dtype=xs.float32)
    assert not caught, [str(w.message)[:80] for w in caught]


def test_bug_dask_unknown_shape() -> None:
    x = da.from_array(np.zeros((4, 3)), chunks=2)
    unknown = x[x[:, 0] > 0]  # shape (nan, 3)
    exc = _named_error(lambda: eyelike.eye_like(unknown))
    assert isinstance(exc, ValueError)
    assert "x" in str(exc)
    # Found by the OpenVINO fuzzer: a 1-D batch_shape of unknown length was
    # a TypeError from range(nan).
    lazy = da.from_array(np.array([2, 0]), chunks=1)
    exc = _named_error(
        lambda: eyelike.openvino.eye(2, 2, 0, lazy[lazy > 0], output_type="f32")
    )
    assert isinstance(exc, ValueError)
    assert "batch_shape must have a known shape" in str(exc)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: eyelike.eye_like(np.float32), "x"),
        (lambda: eyelike.eye(2, out=np.float64), "out"),
        (lambda: eyelike.eye(2, batch_shape=np.int64), "batch_shape"),
        (lambda: eyelike.eye(2, batch_shape=np), "batch_shape"),
        (lambda: eyelike.eye(2, batch_shape=2, k=np.int64), "k"),
        (lambda: eyelike.onnx.eye_like(np.float32), "x"),
        (lambda: eyelike.openvino.eye(np.int64, 2, 0, output_type="f32"), "num_rows"),
        (
            lambda: eyelike.openvino.eye(2, 2, 0, np.int32, output_type="f32"),
            "batch_shape",
        ),
    ],
    ids=[
        "eye_like x",
        "out",
        "batch_shape",
        "batch_shape module",
        "k",
        "onnx x",
        "openvino num_rows",
        "openvino batch_shape",
    ],
)
def test_bug_scalar_type_as_array(call: Callable[[], Any], name: str) -> None:
    exc = _named_error(call)
    assert isinstance(exc, TypeError)
    assert names(name, str(exc)), str(exc)


@pytest.mark.parametrize(
    ("args", "name"),
    [((0, 2**63), "n_cols"), ((2**64, 0), "n_rows"), ((0, 10**30), "n_cols")],
)
def test_bug_fast_path_skips_count_limits(args: tuple[int, int], name: str) -> None:
    exc = _named_error(lambda: eyelike.eye(*args))
    assert isinstance(exc, ValueError)
    assert names(name, str(exc)), str(exc)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: eyelike.onnx.eye_like(np.zeros((2, 2)), k=np.timedelta64(5)), "k"),
        (
            lambda: eyelike.onnx.eye_like(np.zeros((2, 2)), k=np.timedelta64(5, "s")),
            "k",
        ),
        (
            lambda: eyelike.onnx.eye_like(np.zeros((2, 2)), dtype=np.timedelta64(1)),
            "dtype",
        ),
        (
            lambda: eyelike.openvino.eye(
                2, 2, 0, [np.timedelta64("NaT")], output_type="f32"
            ),
            "batch_shape",
        ),
        (
            lambda: eyelike.openvino.eye(
                2, 2, 0, [np.timedelta64(2)], output_type="f32"
            ),
            "batch_shape",
        ),
    ],
    ids=["onnx k", "onnx k with unit", "onnx dtype", "ov batch NaT", "ov batch"],
)
def test_bug_timedelta64_taken_as_int(call: Callable[[], Any], name: str) -> None:
    exc = _named_error(call)
    assert isinstance(exc, TypeError)
    assert names(name, str(exc)), str(exc)


def test_bug_foreign_dtype_numpy_cache_warnings() -> None:
    eyelike.eye(2, dtype=np.dtype("float64"))  # now a key of the cache
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = eyelike.eye(2, dtype=xs.float64)
    assert result.dtype == np.float64
    assert not caught, [str(w.message)[:80] for w in caught]


def test_bug_k_sequence_numpy_cannot_hold() -> None:
    k = [torch.tensor(1.0, dtype=torch.bfloat16)]
    exc = _named_error(lambda: eyelike.eye(2, batch_shape=1, k=k))
    assert isinstance(exc, TypeError)
    assert names("k", str(exc)), str(exc)


def _cupy_importable_without_device() -> bool:
    return importlib.util.find_spec("cupy") is not None and not HAS_GPU


CLI_BUGS = [
    pytest.param(
        ["3", "--backend", "torch", "--device", "meta"],
        id="torch meta device",
    ),
    pytest.param(
        ["3", "--backend", "torch", "--device", "mps"],
        id="torch mps device",
    ),
    pytest.param(
        ["3", "--backend", "torch", "--dtype", "bfloat16"],
        id="torch bfloat16",
    ),
    pytest.param(
        ["3", "--dtype", ","],
        id="dtype comma",
    ),
    pytest.param(
        ["0", str(2**62), "--backend", "torch"],
        id="torch zero elements huge dims",
    ),
    pytest.param(
        ["3", "--batch-shape", ",".join(["1"] * 70), "--backend", "torch"],
        id="torch 70 dims",
    ),
    pytest.param(
        ["3", "--backend", "cupy"],
        id="cupy without a device",
        marks=[
            pytest.mark.skipif(
                not _cupy_importable_without_device(),
                reason="needs CuPy installed on a machine without a usable GPU",
            ),
        ],
    ),
]


@pytest.mark.parametrize("argv", CLI_BUGS)
def test_bug_cli_exits_cleanly(argv: list[str]) -> None:
    code, _, stderr = run_cli(argv)
    assert code in (0, 2)
    assert code == 0 or "error" in stderr


# ------------------------------------------------------------- bookkeeping


def test_bug_an_array_deep_in_a_dtype_dict_is_found_every_time() -> None:
    """Bug (the short-path fuzzer, flaky): an array inside a dict inside a
    dict given as a dtype was found by the first call and missed by later
    ones ("not a dtype that numpy knows"): the search marked a dict's values
    by the id of a list copied from them, which the next copy reused."""
    value = {"a": {"b": [], "": {"": np.int16(0), "c": np.zeros(2)}}}
    for _ in range(20):
        with pytest.raises(eyelike.DTypeError, match="not a value"):
            eyelike.eye(3, 4, k=1, dtype=value)


@pytest.mark.skipif(xs is None, reason="needs array_api_strict")
@pytest.mark.parametrize("shape", [(1, 0), (2, 1), (2, 3)])
def test_bug_k_sequence_holding_a_2d_array_without_tolist(shape: Any) -> None:
    """A ``k`` sequence holding an array of rank 2 or more from a namespace
    with no ``tolist`` (array-api-strict's) was read an index at a time,
    ``v[i]``, which that namespace refuses on a 2-D array (its raw
    IndexError, found by test_fuzz_eye). Read as ``v[i, ...]``: the eye, or
    the error naming ``k``."""
    entry = xs.zeros(shape, dtype=xs.int64)
    got = eyelike.eye(2, batch_shape=(1, *shape), k=[entry])
    assert got.shape == (1, *shape, 2, 2)
    assert (got == np.eye(2)).all()
    with pytest.raises(ValueError, match=r"^k of shape \(1, 1, 0\) does not broadcast"):
        eyelike.eye(0, k=[xs.empty((1, 0), dtype=xs.bool)])


def test_every_unjudged_input_has_a_stated_reason() -> None:
    # Each Unjudged label in the fuzz modules is a key of UNJUDGED_REASONS,
    # and each key is used: no unexplained and no stale entries.
    tests = Path(__file__).resolve().parents[1]
    sources = [*tests.rglob("fuzz_*.py"), *tests.rglob("test_fuzz_*.py")]
    text = "".join(p.read_text(encoding="utf-8") for p in sources)
    labels = set(re.findall(r'Unjudged\("([a-z0-9_]+)"\)', text))
    assert labels <= set(UNJUDGED_REASONS), labels - set(UNJUDGED_REASONS)
    assert set(UNJUDGED_REASONS) <= labels, set(UNJUDGED_REASONS) - labels
