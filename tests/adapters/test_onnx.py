"""``eyelike.onnx.eye_like`` (ONNX EyeLike-9) against ONNX's own test cases,
ONNX Runtime and ``onnx.reference.ReferenceEvaluator``.

Each differential model is built once per (input type, output type, k) and
cached; its input has symbolic dimensions, so one model serves every shape.
Tests that need ``onnx`` or ``onnxruntime`` skip, with a reason, where the
package is missing; the bad-input and namespace tests need neither.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers import GPU_REASON, HAS_GPU, forbid_building, reference, to_numpy

import eyelike
from eyelike import _core_like
from eyelike.onnx import eye_like as onnx_eye_like

# TensorProto enum -> NumPy type, for the twelve types EyeLike-9 allows.
TYPES: dict[int, Any] = {
    1: np.float32,
    2: np.uint8,
    3: np.int8,
    4: np.uint16,
    5: np.int16,
    6: np.int32,
    7: np.int64,
    9: np.bool_,
    10: np.float16,
    11: np.float64,
    12: np.uint32,
    13: np.uint64,
}
OUT_TYPES: list[int | None] = [*TYPES, None]
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
EDGE_KS = [0, 1, -1, 3, -3, 4, -4, 5, -5, 2**31, -(2**31), 2**32 + 1]
EDGE_KS += [INT64_MAX, INT64_MIN, INT64_MIN + 1, -INT64_MAX]
EDGE_SHAPES = [(0, 3), (3, 0), (0, 0), (1, 1), (3, 4), (4, 3), (1, 6), (6, 1)]
ORT_MISSING = "onnxruntime is not installed"
ONNX_MISSING = "onnx is not installed"


@pytest.fixture(scope="module")
def onnx() -> Any:
    return pytest.importorskip("onnx", reason=ONNX_MISSING)


@pytest.fixture(scope="module")
def ort() -> Any:
    pytest.importorskip("onnx", reason=ONNX_MISSING)
    return pytest.importorskip("onnxruntime", reason=ORT_MISSING)


@functools.cache
def _model_bytes(t_in: int, t_out: int | None, k: int) -> bytes:
    import onnx

    helper = onnx.helper
    attrs: dict[str, int] = {"k": k}
    if t_out is not None:
        attrs["dtype"] = t_out
    node = helper.make_node("EyeLike", ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "eyelike",
        [helper.make_tensor_value_info("x", t_in, ["rows", "cols"])],
        [helper.make_tensor_value_info("y", t_out or t_in, ["rows", "cols"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8  # what every ONNX Runtime release of the test group reads
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


@functools.cache
def _ort_session(t_in: int, t_out: int | None, k: int) -> Any:
    """A session, or None where ONNX Runtime has no EyeLike kernel for the types."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # tiny outputs: a thread pool only costs
    options.inter_op_num_threads = 1
    try:
        return onnxruntime.InferenceSession(
            _model_bytes(t_in, t_out, k),
            options,
            providers=["CPUExecutionProvider"],
        )
    except Exception as exc:  # ORT raises its own pybind11 exception types
        if "NOT_IMPLEMENTED" in str(exc):
            return None
        raise


@functools.cache
def _reference_evaluator(t_in: int, t_out: int | None, k: int) -> Any:
    from onnx import ModelProto
    from onnx.reference import ReferenceEvaluator

    model = ModelProto()
    model.ParseFromString(_model_bytes(t_in, t_out, k))
    return ReferenceEvaluator(model)


def _input(t_in: int, shape: tuple[int, int], rng: np.random.Generator) -> Any:
    """An input of the type, with arbitrary values (EyeLike never reads them)."""
    return rng.integers(0, 2, size=shape).astype(TYPES[t_in])


def _check(x: Any, t_out: int | None, k: int, ours: Any, theirs: Any) -> None:
    want = x.dtype if t_out is None else np.dtype(TYPES[t_out])
    assert ours.dtype == want, (x.dtype, t_out, k)
    assert theirs.dtype == want, (x.dtype, t_out, k)
    np.testing.assert_array_equal(ours, theirs, err_msg=f"{x.shape=} {t_out=} {k=}")
    np.testing.assert_array_equal(ours.astype(bool), reference((), *x.shape, k))


def _random_cases(seed: int, n: int) -> Iterator[tuple[tuple[int, int], int]]:
    """Shapes and offsets: mostly near the matrix, some far beyond it."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        rows, cols = (int(v) for v in rng.integers(0, 9, size=2))
        if rng.random() < 0.1:
            rows, cols = (int(v) for v in rng.integers(0, 70, size=2))
        if rng.random() < 0.85:
            k = int(rng.integers(-rows - 2, cols + 3))
        else:
            k = int(rng.choice(EDGE_KS))
        yield (rows, cols), k


# ---------------------------------------------------------------- ONNX's own


def test_onnx_node_test_cases(onnx: Any) -> None:
    """The EyeLike cases shipped in the onnx package, all of them."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        # Building every operator's cases warns (overflow in other operators).
        warnings.simplefilter("ignore")
        cases = collect_testcases("EyeLike")
    names = sorted(case.name for case in cases)
    assert len(cases) >= 3, names
    for case in cases:
        (node,) = case.model.graph.node
        assert node.op_type == "EyeLike"
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        for inputs, outputs in case.data_sets:
            got = onnx_eye_like(inputs[0], **attrs)
            assert got.dtype == outputs[0].dtype, case.name
            np.testing.assert_array_equal(got, outputs[0], err_msg=case.name)


# ---------------------------------------------------------------- differential


@pytest.fixture(scope="module")
def ort_pairs(ort: Any) -> list[tuple[int, int | None]]:
    """The (input type, output type) pairs ONNX Runtime has a kernel for."""
    return [
        (t_in, t_out)
        for t_in in TYPES
        for t_out in OUT_TYPES
        if _ort_session(t_in, t_out, 0) is not None
    ]


def test_onnxruntime_has_kernels(ort_pairs: list[tuple[int, int | None]]) -> None:
    # FLOAT -> FLOAT is in every release; the rest are probed, not assumed.
    assert (1, None) in ort_pairs
    assert (1, 1) in ort_pairs


def test_matches_onnxruntime_random(
    ort_pairs: list[tuple[int, int | None]],
) -> None:
    rng = np.random.default_rng(20240601)
    count = 0
    for shape, k in _random_cases(1, 400):
        t_in, t_out = ort_pairs[int(rng.integers(len(ort_pairs)))]
        x = _input(t_in, shape, rng)
        session = _ort_session(t_in, t_out, k)
        (theirs,) = session.run(None, {"x": x})
        _check(x, t_out, k, onnx_eye_like(x, dtype=t_out, k=k), theirs)
        count += 1
    assert count == 400


def test_matches_onnxruntime_edges(ort_pairs: list[tuple[int, int | None]]) -> None:
    rng = np.random.default_rng(7)
    for i, k in enumerate(EDGE_KS):
        t_in, t_out = ort_pairs[i * 7 % len(ort_pairs)]
        session = _ort_session(t_in, t_out, k)
        for shape in EDGE_SHAPES:
            x = _input(t_in, shape, rng)
            (theirs,) = session.run(None, {"x": x})
            _check(x, t_out, k, onnx_eye_like(x, dtype=t_out, k=k), theirs)


def test_matches_reference_evaluator_random(onnx: Any) -> None:
    """All twelve input types against all twelve output types (and None)."""
    rng = np.random.default_rng(20240602)
    pairs = [(t_in, t_out) for t_in in TYPES for t_out in OUT_TYPES]
    seen = set()
    for i, (shape, k) in enumerate(_random_cases(2, 468)):
        t_in, t_out = pairs[i % len(pairs)]  # every pair three times
        seen.add((t_in, t_out))
        x = _input(t_in, shape, rng)
        (theirs,) = _reference_evaluator(t_in, t_out, k).run(None, {"x": x})
        _check(x, t_out, k, onnx_eye_like(x, dtype=t_out, k=k), theirs)
    assert len(seen) == 12 * 13


@pytest.mark.parametrize("t_out", OUT_TYPES, ids=str)
def test_matches_reference_evaluator_edges(onnx: Any, t_out: int | None) -> None:
    rng = np.random.default_rng(8)
    ins = list(TYPES)
    for i, k in enumerate(EDGE_KS):
        t_in = ins[i % len(ins)] if t_out is not None else ins[(i * 5) % len(ins)]
        evaluator = _reference_evaluator(t_in, t_out, k)
        for shape in EDGE_SHAPES:
            x = _input(t_in, shape, rng)
            (theirs,) = evaluator.run(None, {"x": x})
            _check(x, t_out, k, onnx_eye_like(x, dtype=t_out, k=k), theirs)


# ---------------------------------------------------------------- bad input


def _x(shape: tuple[int, ...] = (2, 3), dtype: Any = np.float32) -> Any:
    return np.zeros(shape, dtype=dtype)


V, T = ValueError, TypeError


def _bad(name: str, exc: type[Exception], match: str, x: Any, **kw: Any) -> Any:
    return pytest.param(x, kw, exc, match, id=name)


BAD = [
    _bad("rank-1", V, r"x.*rank 2.*\(3,\)", _x((3,))),
    _bad("rank-3", V, r"x.*rank 2.*\(2, 3, 4\)", _x((2, 3, 4))),
    _bad("rank-0", V, r"x.*rank 2.*\(\)", _x(())),
    _bad("list", T, r"x must be an array", [[0.0, 1.0]]),
    _bad("enum-0", T, r"dtype=0 \(UNDEFINED\)", _x(), dtype=0),
    _bad("string", T, r"dtype=8 \(STRING\)", _x(), dtype=8),
    _bad("c64", T, r"dtype=14 \(COMPLEX64\)", _x(), dtype=14),
    _bad("c128", T, r"dtype=15 \(COMPLEX128\)", _x(), dtype=15),
    _bad("bf16", T, r"dtype=16 \(BFLOAT16\)", _x(), dtype=16),
    _bad("f8", T, r"dtype=17 \(FLOAT8E4M3FN\)", _x(), dtype=17),
    _bad("enum-99", T, r"dtype=99 \(unknown\)", _x(), dtype=99),
    _bad("enum-neg", T, r"dtype=-1 \(unknown\)", _x(), dtype=-1),
    _bad("dtype-bool", T, r"dtype .*bool True", _x(), dtype=True),
    _bad("dtype-float", T, r"dtype .*float 1\.0", _x(), dtype=1.0),
    _bad("dtype-name", T, r"dtype .*'float32'", _x(), dtype="float32"),
    _bad("dtype-np-type", T, r"dtype .*float32", _x(), dtype=np.float32),
    _bad("x-c64", T, r"x has dtype complex64", _x(dtype=np.complex64)),
    _bad("x-str", T, r"x has dtype <U1", _x(dtype=np.str_)),
    _bad("x-object", T, r"x has dtype object", _x(dtype=object), dtype=1),
    _bad("k-2**63", V, r"k must fit in int64.*9223372036854775808", _x(), k=2**63),
    _bad("k-low", V, r"k .*-9223372036854775809", _x(), k=-(2**63) - 1),
    _bad("k-huge", V, r"k .*int64", _x(), k=10**30),
    _bad("k-u64", V, r"k .*int64", _x(), k=np.uint64(2**64 - 1)),
    _bad("k-bool", T, r"k must be an int.*bool True", _x(), k=True),
    _bad("k-float", T, r"k must be an int.*float", _x(), k=1.0),
    _bad("k-array", T, r"k must be an int.*ndarray", _x(), k=np.array(1)),
    _bad("k-list", T, r"k must be an int.*list", _x(), k=[0]),
]


@pytest.mark.parametrize(("x", "kwargs", "exc", "match"), BAD)
def test_bad_input(
    monkeypatch: pytest.MonkeyPatch,
    x: Any,
    kwargs: dict[str, Any],
    exc: type[Exception],
    match: str,
) -> None:
    # Refused before any allocation.
    forbid_building(monkeypatch, _core_like, "eye_like")
    with pytest.raises(exc, match=match):
        onnx_eye_like(x, **kwargs)


def test_bfloat16_input_is_refused() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.zeros((2, 2), dtype=ml_dtypes.bfloat16)
    with pytest.raises(TypeError, match=r"x has dtype bfloat16"):
        onnx_eye_like(x, dtype=1)


def test_keywords_only() -> None:
    with pytest.raises(TypeError):
        onnx_eye_like(_x(), 1)  # type: ignore[misc]


# ---------------------------------------------------------------- namespaces


def test_numpy_defaults() -> None:
    x = np.ones((3, 4), dtype=np.uint16)
    got = onnx_eye_like(x)
    assert type(got) is np.ndarray
    assert got.dtype == np.uint16
    assert got.flags.writeable
    np.testing.assert_array_equal(got, np.eye(3, 4, dtype=np.uint16))
    # onnx.TensorProto enums are plain ints: numpy integers are accepted too.
    got = onnx_eye_like(x, dtype=np.int64(9), k=np.int32(-1))
    np.testing.assert_array_equal(got, np.eye(3, 4, k=-1, dtype=bool))


def test_torch_in_torch_out() -> None:
    torch = pytest.importorskip("torch")
    x = torch.zeros((3, 5), dtype=torch.int32)
    got = onnx_eye_like(x, k=2)
    assert isinstance(got, torch.Tensor)
    assert got.dtype == torch.int32
    assert got.device == x.device
    np.testing.assert_array_equal(to_numpy(got), reference((), 3, 5, 2))
    got = onnx_eye_like(x, dtype=10, k=-1)
    assert got.dtype == torch.float16
    np.testing.assert_array_equal(to_numpy(got), reference((), 3, 5, -1))
    for dtype in (torch.bfloat16, torch.complex64):
        with pytest.raises(TypeError, match=r"x has dtype"):
            onnx_eye_like(torch.zeros((2, 2), dtype=dtype))


def test_array_api_strict_in_array_api_strict_out() -> None:
    xp = pytest.importorskip("array_api_strict")
    dev = xp.Device("device1")
    x = xp.zeros((4, 3), dtype=xp.int64, device=dev)
    got = onnx_eye_like(x, dtype=9, k=-2)
    assert type(got) is type(x)
    assert got.dtype == xp.bool
    assert got.device == dev
    np.testing.assert_array_equal(to_numpy(got), reference((), 4, 3, -2))
    got = onnx_eye_like(x, k=INT64_MIN)
    assert got.dtype == xp.int64
    assert not np.any(to_numpy(got))
    # array-api-strict has no float16: a TypeError naming the attribute.
    with pytest.raises(TypeError, match=r"dtype=10 \(FLOAT16\).*array_api_strict"):
        onnx_eye_like(x, dtype=10)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason=GPU_REASON)
def test_cupy_in_cupy_out() -> None:
    cp = pytest.importorskip("cupy")
    x = cp.zeros((3, 4), dtype=cp.float32)
    got = onnx_eye_like(x, dtype=7, k=1)
    assert isinstance(got, cp.ndarray)
    assert got.dtype == cp.int64
    np.testing.assert_array_equal(got.get(), np.eye(3, 4, k=1, dtype=np.int64))


def test_same_as_general_eye_like() -> None:
    x = np.zeros((5, 7), dtype=np.float64)
    for k in (-6, -1, 0, 3, 7, INT64_MAX):
        np.testing.assert_array_equal(onnx_eye_like(x, k=k), eyelike.eye_like(x, k=k))


def test_docstring_is_numpydoc_and_examples_run() -> None:
    import doctest
    import inspect

    doc = inspect.getdoc(onnx_eye_like) or ""
    for section in ("Parameters", "Returns", "Raises", "Examples"):
        assert f"{section}\n---" in doc, section
    result = doctest.testmod(eyelike.onnx)
    assert result.failed == 0
    assert result.attempted >= 3


def test_importing_eyelike_leaves_the_operator_packages_alone() -> None:
    """``eyelike.onnx`` / ``eyelike.openvino`` never import ``onnx``/``openvino``."""
    import subprocess
    import sys

    code = (
        "import sys, eyelike, eyelike.onnx, eyelike.openvino; "
        "bad = {'onnx', 'onnxruntime', 'openvino'} & set(sys.modules); "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
