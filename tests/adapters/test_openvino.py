"""``eyelike.openvino.eye`` (OpenVINO Eye-9) against OpenVINO's CPU runtime.

Each OpenVINO model takes ``num_rows``, ``num_columns``, ``diagonal_index``
(and ``batch_shape``) as parameters, so one compiled model serves many
inputs; models are compiled once per (output type, index type, scalar rank,
batch rank) and cached. Known differences, asserted against the formula
instead of against OpenVINO:

* OpenVINO's CPU runtime reads ``diagonal_index`` as 32 bits (``2**32 + 1``
  acts like ``1``): for ``|k| >= 2**31`` we check our result against the
  formula ``col - row == k``.
* A ``batch_shape`` tensor with 0 elements makes OpenVINO's CPU runtime
  return an unwritten buffer: an empty batch is fed to a model without the
  ``batch_shape`` input.

Tests that need ``openvino`` skip, with a reason, where it is missing; the
bad-input and namespace tests do not need it.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from helpers import GPU_REASON, HAS_GPU, forbid_building, reference, to_numpy

from eyelike import _core
from eyelike.openvino import eye as ov_eye

# OpenVINO element type name -> NumPy type of our NumPy result.
OUTPUT_TYPES: dict[str, Any] = {
    "boolean": np.bool_,
    "bf16": "bfloat16",  # ml_dtypes
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
}
REFUSED = ["u1", "u2", "u3", "u4", "u6", "i4", "nf4", "f4e2m1", "f8e4m3"]
REFUSED += ["f8e5m2", "f8e8m0", "string", "dynamic", "undefined"]
INT32_MAX = 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
HUGE_KS = [2**31, -(2**31) - 1, 2**32 + 1, -(2**32) + 1, 2**33, INT64_MAX, INT64_MIN]
OV_MISSING = "openvino is not installed"


@pytest.fixture(scope="module")
def ov() -> Any:
    return pytest.importorskip("openvino", reason=OV_MISSING)


def _opset9() -> Any:
    try:
        import openvino.opset9 as ops
    except ImportError:  # releases before 2025 keep it under openvino.runtime
        import openvino.runtime.opset9 as ops
    return ops


@functools.cache
def _compiled(output_type: str, index: str, scalar_rank: int, batch_rank: int) -> Any:
    """An Eye-9 model on the CPU; ``batch_rank`` 0 means no batch_shape input."""
    import openvino

    ops = _opset9()
    index_type = getattr(openvino.Type, index)
    shape = [] if scalar_rank == 0 else [1]
    params = [
        ops.parameter(shape, index_type, name=name)
        for name in ("num_rows", "num_columns", "diagonal_index")
    ]
    if batch_rank:
        params.append(ops.parameter([batch_rank], index_type, name="batch_shape"))
    node = ops.eye(*params[:3], output_type, params[3] if batch_rank else None)
    model = openvino.Model([node], params, "eye")
    # Tiny outputs: one thread avoids a thread pool's start and spin costs.
    return _core_ov().compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": 1})


@functools.lru_cache(maxsize=1)
def _core_ov() -> Any:
    import openvino

    return openvino.Core()


def _run_openvino(
    output_type: str,
    rows: int,
    cols: int,
    k: int,
    batch: tuple[int, ...],
    index: str,
    scalar_rank: int,
) -> Any:
    compiled = _compiled(output_type, index, scalar_rank, len(batch))
    np_index = np.dtype("int32" if index == "i32" else "int64")
    shape = () if scalar_rank == 0 else (1,)
    inputs = [np.full(shape, v, dtype=np_index) for v in (rows, cols, k)]
    if batch:
        inputs.append(np.array(batch, dtype=np_index))
    return compiled(inputs)[0]


def _bits(a: Any) -> Any:
    """Bit patterns: OpenVINO hands bf16 back as a float16-typed buffer."""
    a = np.asarray(a)
    return (
        a.view(np.uint16) if a.dtype.itemsize == 2 and a.dtype.kind not in "iu" else a
    )


def _want_dtype(output_type: str) -> np.dtype[Any]:
    if output_type == "bf16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(OUTPUT_TYPES[output_type])


def _as_input(value: int, form: str) -> Any:
    """``value`` as one of the forms Eye-9 inputs may take."""
    if form == "int":
        return value
    kind, dtype = form.split("-")
    if kind == "scalar":
        return np.dtype(dtype).type(value)
    return np.array(value if kind == "0d" else [value], dtype=dtype)


def _random_form(rng: np.random.Generator, value: int) -> str:
    forms = ["int", "scalar-int64", "0d-int64", "1d-int64"]
    if -(2**31) <= value <= INT32_MAX:
        forms += ["scalar-int32", "0d-int32", "1d-int32"]
    return str(rng.choice(forms))


def _random_batch(rng: np.random.Generator, batch: tuple[int, ...]) -> Any:
    if not batch:
        return [None, (), [], np.zeros(0, np.int64)][int(rng.integers(4))]
    form = int(rng.integers(4))
    if form == 0:
        return list(batch)
    if form == 1:
        return tuple(batch)
    return np.array(batch, dtype=np.int32 if form == 2 else np.int64)


@pytest.mark.parametrize("output_type", list(OUTPUT_TYPES))
def test_matches_openvino_random(ov: Any, output_type: str) -> None:
    """Hundreds of random cases over all output types (30 per type)."""
    want = _want_dtype(output_type)
    rng = np.random.default_rng(sum(map(ord, output_type)))
    compared = 0
    for _ in range(30):
        rows, cols = (int(v) for v in rng.integers(0, 8, size=2))
        if rng.random() < 0.1:
            rows, cols = (int(v) for v in rng.integers(0, 65, size=2))
        batch = tuple(int(v) for v in rng.integers(0, 4, size=int(rng.integers(4))))
        if rng.random() < 0.9:
            k = int(rng.integers(-rows - 2, cols + 3))
        else:
            k = int(rng.choice(HUGE_KS))
        ours = ov_eye(
            _as_input(rows, _random_form(rng, rows)),
            _as_input(cols, _random_form(rng, cols)),
            _as_input(k, _random_form(rng, k)),
            _random_batch(rng, batch),
            output_type=output_type,
        )
        case = f"{rows=} {cols=} {k=} {batch=} {output_type=}"
        assert type(ours) is np.ndarray, case
        assert ours.dtype == want, case
        assert ours.shape == (*batch, rows, cols), case
        np.testing.assert_array_equal(
            ours.astype(bool), reference(batch, rows, cols, k), err_msg=case
        )
        if not -(2**31) <= k <= INT32_MAX:
            continue  # OpenVINO's CPU runtime truncates k to 32 bits
        index = (
            "i32"
            if max(rows, cols, *batch, 0) <= INT32_MAX and rng.random() < 0.5
            else "i64"
        )
        theirs = _run_openvino(
            output_type, rows, cols, k, batch, index, int(rng.integers(2))
        )
        assert theirs.shape == ours.shape, case
        np.testing.assert_array_equal(_bits(ours), _bits(theirs), err_msg=case)
        compared += 1
    assert compared >= 20


@pytest.mark.parametrize("output_type", ["f32", "boolean", "bf16", "u64"])
def test_matches_openvino_edges(ov: Any, output_type: str) -> None:
    shapes = [(0, 3), (3, 0), (0, 0), (1, 1), (3, 4), (4, 3), (1, 6), (6, 1)]
    ks = [0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7]
    ks += [INT32_MAX, -(2**31)]
    for batch in [(), (2,), (1, 3), (2, 0), (0,)]:
        for rows, cols in shapes:
            for k in ks:
                ours = ov_eye(rows, cols, k, batch, output_type=output_type)
                theirs = _run_openvino(output_type, rows, cols, k, batch, "i64", 0)
                case = f"{rows=} {cols=} {k=} {batch=}"
                np.testing.assert_array_equal(_bits(ours), _bits(theirs), case)


def test_formula_wins_over_prose(ov: Any) -> None:
    """rows=3, cols=4, k=3: the prose says zeros, the formula a one at [0, 3]."""
    ours = ov_eye(3, 4, 3, output_type="i32")
    want = np.zeros((3, 4), np.int32)
    want[0, 3] = 1
    np.testing.assert_array_equal(ours, want)
    np.testing.assert_array_equal(_run_openvino("i32", 3, 4, 3, (), "i64", 0), want)
    # Eye-9's own examples.
    np.testing.assert_array_equal(
        ov_eye(3, 4, 2, output_type="i32"), np.eye(3, 4, 2, dtype=np.int32)
    )
    np.testing.assert_array_equal(
        ov_eye(3, 4, -1, output_type="i32"), np.eye(3, 4, -1, dtype=np.int32)
    )
    got = ov_eye(2, 2, 5, [1, 2], output_type="f16")
    assert got.shape == (1, 2, 2, 2)
    assert got.dtype == np.float16
    assert not got.any()


@pytest.mark.parametrize("k", HUGE_KS)
def test_64_bit_diagonal_index(k: int) -> None:
    """No truncation to 32 bits (OpenVINO's CPU runtime truncates: see above)."""
    for form in ["int", "scalar-int64", "0d-int64", "1d-int64"]:
        got = ov_eye(3, 4, _as_input(k, form), [2], output_type="i64")
        assert got.shape == (2, 3, 4)
        assert not got.any()


# ---------------------------------------------------------------- bad input


V, T = ValueError, TypeError


def _bad(name: str, exc: type[Exception], match: str, *args: Any, **kw: Any) -> Any:
    return pytest.param(args, kw, exc, match, id=name)


BAD = [
    _bad("rows-2-elem", V, r"num_rows.*1 element.*\(2,\)", np.array([3, 4]), 3, 0),
    _bad("cols-0-elem", V, r"num_columns.*\(0,\)", 3, np.array([], np.int32), 0),
    _bad("k-2d", V, r"diagonal_index.*\(1, 1\)", 3, 3, np.zeros((1, 1), np.int64)),
    _bad("rows-float", T, r"num_rows.*float 3\.0", 3.0, 3, 0),
    _bad("rows-f32", T, r"num_rows.*int32 or int64.*float32", np.float32(3), 3, 0),
    _bad("rows-f64-arr", T, r"num_rows.*float64", np.array([3.0]), 3, 0),
    _bad("cols-i8", T, r"num_columns.*int32 or int64.*int8", 3, np.int8(3), 0),
    _bad("k-u64", T, r"diagonal_index.*uint64", 3, 3, np.array(1, np.uint64)),
    _bad("k-i16", T, r"diagonal_index.*int16", 3, 3, np.array([1], np.int16)),
    _bad("rows-bool", T, r"num_rows.*bool", True, 3, 0),
    _bad("cols-np-bool", T, r"num_columns.*bool", 3, np.bool_(True), 0),
    _bad("k-bool-arr", T, r"diagonal_index.*bool", 3, 3, np.array([False])),
    _bad("rows-list", T, r"num_rows.*list", [3], 3, 0),
    _bad("rows-str", T, r"num_rows.*str", "3", 3, 0),
    _bad("rows-neg", V, r"num_rows must be non-negative; got -1", -1, 3, 0),
    _bad("cols-neg", V, r"num_columns.*-2", 3, np.array([-2], np.int32), 0),
    _bad("rows-huge", V, r"num_rows.*int64", 2**63, 3, 0),
    _bad("k-2**63", V, r"diagonal_index.*int64.*9223372036854775808", 3, 3, 2**63),
    _bad("k-low", V, r"diagonal_index.*int64", 3, 3, -(2**63) - 1),
    _bad("batch-neg", V, r"batch_shape\[1\].*-1", 3, 3, 0, [2, -1]),
    _bad("batch-neg-arr", V, r"batch_shape\[0\].*-1", 3, 3, 0, np.array([-1])),
    _bad("batch-2d", V, r"batch_shape.*1-D.*\(1, 1\)", 3, 3, 0, np.array([[2]])),
    _bad("batch-0d", V, r"batch_shape.*1-D.*\(\)", 3, 3, 0, np.array(2)),
    _bad("batch-float", T, r"batch_shape.*float64", 3, 3, 0, np.array([2.0])),
    _bad("batch-u8", T, r"batch_shape.*uint8", 3, 3, 0, np.array([2], np.uint8)),
    _bad("batch-bool", T, r"batch_shape\[0\].*bool", 3, 3, 0, [True]),
    _bad("batch-item-float", T, r"batch_shape\[0\].*float", 3, 3, 0, [2.0]),
    _bad("batch-int", T, r"batch_shape must be None, a 1-D", 3, 3, 0, 2),
    _bad("batch-str", T, r"batch_shape must be None, a 1-D", 3, 3, 0, "2"),
    _bad("type-bogus", T, r"output_type='bogus' is not", 3, 3, 0, output_type="bogus"),
    _bad("type-np-name", T, r"output_type='float32'", 3, 3, 0, output_type="float32"),
    _bad("type-upper", T, r"output_type='F32'", 3, 3, 0, output_type="F32"),
    _bad("type-none", T, r"output_type .*None", 3, 3, 0, output_type=None),
    _bad("type-np", T, r"output_type .*float32", 3, 3, 0, output_type=np.float32),
]


@pytest.mark.parametrize(("args", "kwargs", "exc", "match"), BAD)
def test_bad_input(
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    exc: type[Exception],
    match: str,
) -> None:
    forbid_building(monkeypatch, _core, "eye")  # refused before any allocation
    with pytest.raises(exc, match=match):
        ov_eye(*args, **{"output_type": "f32", **kwargs})


@pytest.mark.parametrize("output_type", REFUSED)
def test_packed_and_exotic_types_are_refused(output_type: str) -> None:
    with pytest.raises(
        TypeError, match=rf"output_type='{output_type}'.*allowed: boolean"
    ):
        ov_eye(2, 2, 0, output_type=output_type)


@pytest.mark.parametrize("output_type", list(OUTPUT_TYPES))
def test_output_type_as_an_openvino_type(ov: Any, output_type: str) -> None:
    """Bug: openvino.Type objects, which OpenVINO users hold, were a
    TypeError; they mean what their names mean."""
    element = getattr(ov.Type, output_type)
    got = ov_eye(3, 4, 1, [2], output_type=element)
    want = ov_eye(3, 4, 1, [2], output_type=output_type)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("output_type", REFUSED)
def test_refused_types_as_openvino_types(ov: Any, output_type: str) -> None:
    element = getattr(ov.Type, output_type, None)
    if element is None:
        pytest.skip(f"this OpenVINO has no Type.{output_type}")
    with pytest.raises(TypeError, match=rf"output_type='{output_type}'.*allowed"):
        ov_eye(2, 2, 0, output_type=element)


def test_output_type_is_required() -> None:
    with pytest.raises(TypeError, match="output_type"):
        ov_eye(2, 2, 0)  # type: ignore[call-arg]


# ---------------------------------------------------------------- namespaces


def test_numpy_result_is_fresh_and_writeable() -> None:
    got = ov_eye(
        np.int32(2), np.array([3], np.int64), np.array(1, np.int32), output_type="u8"
    )
    assert type(got) is np.ndarray
    assert got.flags.writeable
    np.testing.assert_array_equal(got, np.eye(2, 3, 1, dtype=np.uint8))


def test_torch_in_torch_out() -> None:
    torch = pytest.importorskip("torch")
    rows = torch.tensor(3)
    cols = torch.tensor([4], dtype=torch.int32)
    got = ov_eye(rows, cols, torch.tensor(-1), torch.tensor([2, 1]), output_type="bf16")
    assert isinstance(got, torch.Tensor)
    assert got.dtype == torch.bfloat16
    assert got.device == rows.device
    np.testing.assert_array_equal(to_numpy(got), reference((2, 1), 3, 4, -1))
    # One array input is enough to pick the namespace.
    got = ov_eye(3, 3, 0, torch.tensor([2], dtype=torch.int32), output_type="u16")
    assert got.dtype == torch.uint16
    assert got.shape == (2, 3, 3)
    with pytest.raises(TypeError, match=r"num_rows.*float32"):
        ov_eye(torch.tensor(3.0), 3, 0, output_type="f32")
    with pytest.raises(TypeError, match=r"num_columns.*bool"):
        ov_eye(3, torch.tensor(True), 0, output_type="f32")
    with pytest.raises(TypeError, match=r"one namespace.*num_rows: torch.*numpy"):
        ov_eye(torch.tensor(3), np.array(3), 0, output_type="f32")


def test_array_api_strict_in_array_api_strict_out() -> None:
    xp = pytest.importorskip("array_api_strict")
    dev = xp.Device("device1")
    rows = xp.asarray(2, dtype=xp.int32, device=dev)
    k = xp.asarray([1], dtype=xp.int64, device=dev)
    got = ov_eye(rows, 3, k, [2], output_type="i16")
    assert type(got) is type(rows)
    assert got.dtype == xp.int16
    assert got.device == dev
    np.testing.assert_array_equal(to_numpy(got), reference((2,), 2, 3, 1))
    # array-api-strict has no bfloat16 or float16: a TypeError naming output_type.
    for output_type in ("bf16", "f16"):
        with pytest.raises(TypeError, match=rf"output_type='{output_type}'"):
            ov_eye(rows, 3, k, output_type=output_type)
    other = xp.asarray(3, dtype=xp.int32, device=xp.Device("device2"))
    with pytest.raises(ValueError, match=r"one device"):
        ov_eye(rows, other, 0, output_type="f32")


def test_jax_in_jax_out() -> None:
    jnp = pytest.importorskip("jax.numpy")
    rows = jnp.asarray(3, dtype=jnp.int32)
    got = ov_eye(rows, 4, jnp.asarray([1], dtype=jnp.int32), [2], output_type="bf16")
    assert type(got) is type(rows)
    assert got.dtype == jnp.bfloat16
    np.testing.assert_array_equal(to_numpy(got), reference((2,), 3, 4, 1))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason=GPU_REASON)
def test_cupy_in_cupy_out() -> None:
    cp = pytest.importorskip("cupy")
    got = ov_eye(cp.asarray(3), cp.asarray([4], dtype=cp.int32), -1, output_type="f16")
    assert isinstance(got, cp.ndarray)
    assert got.dtype == cp.float16
    np.testing.assert_array_equal(got.get(), np.eye(3, 4, -1, dtype=np.float16))
    # CuPy 14 makes bfloat16 (ml_dtypes' type) like any other dtype.
    got = ov_eye(cp.asarray(3), 3, 0, output_type="bf16")
    assert isinstance(got, cp.ndarray)
    assert got.dtype.name == "bfloat16"
    np.testing.assert_array_equal(to_numpy(got), np.eye(3, dtype=np.float32))


def test_docstring_is_numpydoc_and_examples_run() -> None:
    import doctest
    import inspect

    import eyelike.openvino

    doc = inspect.getdoc(ov_eye) or ""
    for section in ("Parameters", "Returns", "Raises", "Examples"):
        assert f"{section}\n---" in doc, section
    result = doctest.testmod(eyelike.openvino)
    assert result.failed == 0
    assert result.attempted >= 3
