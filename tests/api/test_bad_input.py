"""Every bad input gets the right exception, naming parameter and value,
before anything is allocated; an ``out`` is left untouched."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import raises_before_allocating

import eyelike
from eyelike import eye, eye_like


class Index:
    """An object with ``__index__`` that is not an int."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


A2 = np.zeros((2, 3))

# (call, exception, words the message must contain)
CASES: list[tuple[Callable[[], Any], type[Exception] | None, tuple[str, ...]]] = [
    (lambda: eye(-1), ValueError, ("n_rows", "-1")),
    (lambda: eye(3, -2), ValueError, ("n_cols", "-2")),
    (lambda: eye(True), TypeError, ("n_rows", "bool", "True")),
    (lambda: eye(3, False), TypeError, ("n_cols", "bool")),
    (lambda: eye(np.True_), TypeError, ("n_rows", "bool")),
    (lambda: eye(2.0), TypeError, ("n_rows", "2.0")),
    (lambda: eye(3, 2.5), TypeError, ("n_cols", "2.5")),
    (lambda: eye("3"), TypeError, ("n_rows", "'3'")),
    (lambda: eye(None), TypeError, ("n_rows", "None")),
    (lambda: eye(float("nan")), TypeError, ("n_rows", "nan")),
    (lambda: eye(np.float64(3)), TypeError, ("n_rows", "3.0")),
    (lambda: eye(np.array([2, 3])), TypeError, ("n_rows",)),
    (lambda: eye(Index(-4)), ValueError, ("n_rows", "-4")),
    (lambda: eye(2**63), ValueError, ("n_rows", str(2**63))),
    (lambda: eye(2, batch_shape=-1), ValueError, ("batch_shape", "-1")),
    (lambda: eye(2, batch_shape=(2, -3)), ValueError, ("batch_shape[1]", "-3")),
    (lambda: eye(2, batch_shape=(2, 1.5)), TypeError, ("batch_shape[1]", "1.5")),
    (lambda: eye(2, batch_shape=(True,)), TypeError, ("batch_shape[0]", "bool")),
    (lambda: eye(2, batch_shape="23"), TypeError, ("batch_shape", "'23'")),
    (lambda: eye(2, batch_shape=np.ones((2, 2), int)), ValueError, ("batch_shape",)),
    (lambda: eye(2, batch_shape=np.array([2.0])), TypeError, ("batch_shape[0]",)),
    (lambda: eye(2, batch_shape=np.array([True])), TypeError, ("batch_shape",)),
    (lambda: eye(2, batch_shape=None), TypeError, ("batch_shape", "None")),
    (lambda: eye(2, batch_shape={2: 3}), TypeError, ("batch_shape",)),
    (lambda: eye(2, k=True), TypeError, ("k", "bool")),
    (lambda: eye(2, k=1.0), TypeError, ("k", "1.0")),
    (lambda: eye(2, k="1"), TypeError, ("k", "'1'")),
    (lambda: eye(2, k=None), TypeError, ("k", "None")),
    (lambda: eye(2, k=[1.5, 2], batch_shape=2), TypeError, ("k", "1.5")),
    (lambda: eye(2, k=[True, 1], batch_shape=2), TypeError, ("k", "True")),
    (lambda: eye(2, k=np.array([0.0]), batch_shape=1), TypeError, ("k", "float64")),
    (lambda: eye(2, k=np.array([True]), batch_shape=1), TypeError, ("k", "bool")),
    (lambda: eye(2, k=[0, 1, 2], batch_shape=2), ValueError, ("k", "(3,)", "(2,)")),
    (lambda: eye(2, k=[[0, 1]], batch_shape=2), ValueError, ("k", "(1, 2)")),
    (lambda: eye(2, k=[0, [1]], batch_shape=2), TypeError, ("k", "[0, [1]]")),
    (lambda: eye(2, dtype="foo"), TypeError, ("dtype", "foo")),
    (lambda: eye(2, dtype=object), TypeError, ("dtype", "object")),
    (lambda: eye(2, dtype=str), TypeError, ("dtype", "<U")),
    (lambda: eye(2, dtype="V4"), TypeError, ("dtype", "V4")),
    (lambda: eye(2, dtype="datetime64[s]"), TypeError, ("dtype", "datetime64")),
    (lambda: eye(2, dtype=True), TypeError, ("dtype", "True")),
    (lambda: eye(2, dtype="float8_e8m0fnu"), TypeError, ("float8_e8m0fnu", "0")),
    (lambda: eye(2, device="cuda"), ValueError, ("device", "cuda")),
    (lambda: eye(2, xp=np.linalg), TypeError, ("xp",)),
    (lambda: eye(2, xp="numpy"), TypeError, ("xp", "'numpy'")),
    (lambda: eye(2**40, 2**40), ValueError, ("(1099511627776, 1099511627776)",)),
    (lambda: eye(4, batch_shape=(2**62, 4)), ValueError, ("elements", "2**63")),
    (lambda: eye(2**31, 2**31, dtype="complex128"), ValueError, ("bytes",)),
    (lambda: eye(2**20, 2**20), MemoryError, ("bytes", "memory")),
    (lambda: eye(2**20, 2**20, xp=np, batch_shape=0), None, ()),
    (lambda: eye_like(np.zeros(3)), ValueError, ("x", "rank", "(3,)")),
    (lambda: eye_like(np.float64(1.0)), TypeError, ("x",)),
    (lambda: eye_like([[1, 0], [0, 1]]), TypeError, ("x", "list")),
    (lambda: eye_like(np.zeros((2, 2), dtype=object)), TypeError, ("dtype", "object")),
    (lambda: eye_like(np.zeros((2, 2), dtype="U1")), TypeError, ("dtype", "<U1")),
    (lambda: eye_like(A2, k=[0, 1]), ValueError, ("k", "(2,)", "()")),
    (lambda: eye_like(A2, out=np.zeros((3, 2))), ValueError, ("out", "(3, 2)")),
    (
        lambda: eye_like(A2, dtype="float64", out=np.zeros((2, 3), np.float32)),
        TypeError,
        ("out", "float64"),
    ),
    (lambda: eye(2, 3, out=np.zeros((3, 2))), ValueError, ("out", "(2, 3)")),
    (lambda: eye(2, out=np.zeros((2, 2)), dtype="int8"), TypeError, ("out", "int8")),
    (lambda: eye(2, out=[[0, 0], [0, 0]]), TypeError, ("out", "list")),
]


def _ro() -> np.ndarray[Any, Any]:
    a = np.zeros((2, 2))
    a.flags.writeable = False
    return a


CASES.append((lambda: eye(2, out=_ro()), ValueError, ("out", "read-only")))


@pytest.mark.parametrize(
    ("call", "exc", "words"), CASES, ids=[f"case{i}" for i in range(len(CASES))]
)
def test_bad_call(
    call: Callable[[], Any], exc: type[Exception] | None, words: tuple[str, ...]
) -> None:
    if exc is None:  # a control: the huge-but-empty shape is fine
        assert call().shape == (0, 2**20, 2**20)
        return
    raises_before_allocating(call, exc, *words)


def test_enough_cases() -> None:
    assert sum(exc is not None for _, exc, _ in CASES) >= 40


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 1.5},
        {"k": [0, 1, 2]},
        {"dtype": "int8"},
        {"n_cols": 4},
        {"batch_shape": (3,)},
        {"xp": "torch"},
    ],
    ids=repr,
)
def test_out_untouched_on_failure(kwargs: dict[str, Any]) -> None:
    out = np.arange(2 * 3 * 3, dtype=np.float64).reshape(2, 3, 3)
    before = out.copy()
    n_cols = kwargs.pop("n_cols", 3)
    batch = kwargs.pop("batch_shape", (2,))
    with pytest.raises((TypeError, ValueError)):
        eye(3, n_cols, batch_shape=batch, out=out, **kwargs)
    assert out.tobytes() == before.tobytes()


def test_out_of_other_namespace_refused() -> None:
    torch = pytest.importorskip("torch")
    out = torch.zeros((2, 2))
    with pytest.raises(TypeError, match="out"):
        eye(2, xp=np, out=out)
    with pytest.raises(TypeError, match="out"):
        eye_like(np.zeros((2, 2)), out=out)
    assert not out.any()


def test_jax_out_is_refused() -> None:
    jnp = pytest.importorskip("jax.numpy")
    with pytest.raises(TypeError, match="immutable"):
        eye(2, out=jnp.zeros((2, 2)))


def test_k_from_another_namespace_refused() -> None:
    """Bug: the message said "a NumPy array or a numpy array" and not what
    to do; it names k's library, the result's, and both ways out."""
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError) as info:
        eye(2, batch_shape=2, k=torch.tensor([0, 1]))
    message = str(info.value)
    assert message.startswith("k is a torch array, but the result is made by numpy")
    assert "xp=torch" in message
    assert "a NumPy array" in message
    assert "numpy array" not in message
    np_ = pytest.importorskip("jax.numpy")
    with pytest.raises(TypeError, match=r"or a NumPy or torch array .*xp=jax\.numpy"):
        eye(2, batch_shape=2, k=np_.asarray([0, 1]), xp=torch)


def _nested(depth: int, leaf: Any = 1) -> Any:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


@pytest.mark.parametrize("depth", [63, 200, 3000])
def test_deeply_nested_k_and_batch_shape_refused(depth: int) -> None:
    """Bug: a k or batch_shape nested 3,000 lists deep raised RecursionError
    (building the message), and at 200 levels the message said "k must hold
    integers only" of one integer. Every parameter's message shows such a
    value cut short."""
    with pytest.raises(ValueError, match="k is nested more than 62 levels deep"):
        eye(3, batch_shape=2, k=_nested(depth))
    with pytest.raises(ValueError, match=r"batch_shape \(\) with at most 0 levels"):
        eye(3, k=_nested(depth))
    with pytest.raises(TypeError, match=r"batch_shape\[0\] is a list"):
        eye(3, batch_shape=_nested(depth))
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="k is nested more than 62 levels deep"):
        eye(3, batch_shape=(2, 2), k=looped)
    for call in (
        lambda v: eye(3, dtype=v),
        lambda v: eye(v),
        lambda v: eye(3, v),
        lambda v: eye(3, xp=v),
        lambda v: eye(3, device=v),
        lambda v: eye(3, out=v),
        lambda v: eye_like(v),
        lambda v: eyelike.onnx.eye_like(np.zeros((2, 2)), dtype=v),
        lambda v: eyelike.onnx.eye_like(np.zeros((2, 2)), k=v),
        lambda v: eyelike.openvino.eye(2, 2, v, output_type="f32"),
        lambda v: eyelike.openvino.eye(2, 2, 0, v, output_type="f32"),
        lambda v: eyelike.openvino.eye(2, 2, 0, output_type=v),
    ):
        with pytest.raises((TypeError, ValueError)) as info:
            call(_nested(depth))
        assert "[[[[" in str(info.value) or "nested" in str(info.value)


def test_public_errors_are_builtin() -> None:
    # Callers catch TypeError/ValueError; the one exception class of
    # eyelike's own is both, and public.
    assert [n for n in dir(eyelike) if n.endswith("Error")] == ["DTypeError"]
    assert issubclass(eyelike.DTypeError, TypeError)
    assert issubclass(eyelike.DTypeError, ValueError)


@pytest.mark.parametrize(
    "call",
    [
        lambda: eye(2, dtype="foo"),
        lambda: eye(2, dtype=object),
        lambda: eye(2, dtype="float8_e8m0fnu"),
        lambda: eye_like(np.zeros((2, 2), dtype="U1")),
    ],
)
def test_dtype_refusals_are_type_and_value_errors(call: Any) -> None:
    """Bug: array-api-strict's own test_eye_errors expects ValueError for a
    bad dtype, NumPy's callers TypeError; eyelike raised TypeError only.
    Both now catch it."""
    with pytest.raises(ValueError, match="dtype"):
        call()
    with pytest.raises(TypeError, match="dtype"):
        call()


@pytest.mark.parametrize("python_type", [bool, int, float, complex])
def test_array_api_strict_refuses_python_types_as_dtypes(python_type: type) -> None:
    """Bug: dtype=int (float, bool) was accepted on array-api-strict, which
    itself refuses them (its test_eye_errors): users pick it to catch
    non-portable code. Its own dtypes, names and NumPy's types still work."""
    strict = pytest.importorskip("array_api_strict")
    with pytest.raises(
        TypeError, match=rf"dtype {python_type.__name__}: array_api_strict"
    ):
        eye(2, xp=strict, dtype=python_type)
    with pytest.raises(TypeError, match="array_api_strict takes no Python type"):
        eye_like(strict.zeros((2, 2)), dtype=python_type)
    assert eye(2, xp=strict, dtype="int64").dtype == strict.int64
    assert eye(2, xp=strict, dtype=strict.int8).dtype == strict.int8
    assert eye(2, xp=strict, dtype=np.float32).dtype == strict.float32


@pytest.mark.parametrize("library", ["torch", "jax.numpy"])
def test_dtype_errors_list_only_what_is_accepted(library: str) -> None:
    """Bug: the torch and JAX dtype errors listed float8_e8m0fnu among the
    allowed types, then refused it (it has no exact zero)."""
    xp = pytest.importorskip(library)
    with pytest.raises(TypeError, match="allowed: ") as info:
        eye(2, xp=xp, dtype="no-such-type")
    allowed = str(info.value).split("allowed: ")[1].split(", ")
    assert "float32" in allowed
    assert "float8_e8m0fnu" not in allowed
    for name in allowed:
        eye(2, xp=xp, dtype=name)  # every one listed is accepted


def test_ml_dtypes_names_say_which_extra_to_install() -> None:
    """Bug: without ml_dtypes, dtype="bfloat16" said only "not a dtype that
    numpy knows"; it names the extra to install. (A fresh interpreter in
    which ml_dtypes cannot be imported: once imported, NumPy knows the
    names.)"""
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import eyelike\n"
        "for name in ('bfloat16', 'float8_e4m3fn', 'int4', 'complex32', 'nope'):\n"
        "    try:\n"
        "        eyelike.eye(2, dtype=name)\n"
        "    except TypeError as e:\n"
        "        print(name, '|', e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert len(out) == 5, out
    for line in out[:4]:
        assert "is not a dtype that numpy knows without ml_dtypes" in line, line
        assert "pip install 'eyelike[ml-dtypes]'" in line, line
    assert out[4] == "nope | dtype 'nope' is not a dtype that numpy knows"


class _NoneShape:
    """A ``.shape`` of None (an object that only looks like an array)."""

    shape = None


class _RaisingShape:
    """A ``.shape`` that raises (as a lazy module's uninitialized
    parameter's does, or a strided nested tensor's)."""

    @property
    def shape(self) -> Any:
        msg = "no shape yet"
        raise RuntimeError(msg)


def _look_alikes() -> dict[str, Any]:
    """Objects that look like arrays or integers, but hold no shape or no
    value: every one is refused naming the parameter it was given as."""
    from unittest import mock

    found: dict[str, Any] = {
        "shape None": _NoneShape(),
        "shape raises": _RaisingShape(),
        "mock": mock.Mock(),
        "np.ma.masked": np.ma.masked,
        "0-d masked": np.ma.masked_array(3, mask=True),
        "1-d partly masked": np.ma.array([1, 2], mask=[False, True]),
    }
    try:
        import torch
    except ImportError:
        return found
    found["lazy parameter"] = torch.nn.UninitializedParameter()
    found["lazy buffer"] = torch.nn.UninitializedBuffer()
    graph = torch.fx.Graph()  # (torch.fx.symbolic_trace's stand-in for a tensor)
    found["fx proxy"] = torch.fx.Proxy(graph.placeholder("x"))
    return found


def _openvino(i: int, value: Any) -> Any:
    args: list[Any] = [2, 2, 0, [2]]
    args[i] = value
    return eyelike.openvino.eye(*args, output_type="f32")


# Each argument, given a look-alike, and the name its error must say.
_ARGUMENTS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "n_rows": (lambda v: eye(v), "n_rows"),
    "n_cols": (lambda v: eye(2, v), "n_cols"),
    "k": (lambda v: eye(2, k=v, batch_shape=2), "k"),
    "batch_shape": (lambda v: eye(2, batch_shape=v), "batch_shape"),
    "batch_shape entry": (lambda v: eye(2, batch_shape=(2, v)), "batch_shape[1]"),
    "dtype": (lambda v: eye(2, dtype=v), "dtype"),
    "device": (lambda v: eye(2, device=v), "device"),
    "out": (lambda v: eye(2, out=v), "out"),
    "xp": (lambda v: eye(2, xp=v), "xp"),
    "x": (lambda v: eye_like(v), "x"),
    "eye_like out": (lambda v: eye_like(A2, out=v), "out"),
    "eye_like k": (lambda v: eye_like(np.zeros((2, 2, 2)), k=v), "k"),
    "onnx x": (lambda v: eyelike.onnx.eye_like(v), "x"),
    "onnx k": (lambda v: eyelike.onnx.eye_like(A2, k=v), "k"),
    "num_rows": (lambda v: _openvino(0, v), "num_rows"),
    "diagonal_index": (lambda v: _openvino(2, v), "diagonal_index"),
    "openvino batch_shape": (lambda v: _openvino(3, v), "batch_shape"),
}


@pytest.mark.parametrize("argument", list(_ARGUMENTS))
@pytest.mark.parametrize("kind", list(_look_alikes()))
def test_a_look_alike_in_every_argument_is_refused_by_name(
    kind: str, argument: str
) -> None:
    """Bugs (a review of where the stack meets eyelike): an object whose
    ``.shape`` is None or no sequence (a mock) as a count or batch entry
    raised Python's "object is not iterable"; a lazy module's uninitialized
    parameter as ``x`` or ``out`` raised torch's own RuntimeError about
    load_state_dict, and torch.fx's Proxy as ``x`` array-api-compat's
    "array_namespace requires at least one non-scalar array input"; a
    ``k`` with masked entries was read through its mask (the hidden value
    used), and ``numpy.ma.masked`` as ``k`` was shown as
    "np.float64(0.0)". Every look-alike, in every argument: a TypeError or
    ValueError naming the argument."""
    call, name = _ARGUMENTS[argument]
    value = _look_alikes()[kind]
    with pytest.raises((TypeError, ValueError)) as caught:
        call(value)
    message = str(caught.value)
    assert type(caught.value).__module__ in ("builtins", "eyelike"), message
    assert name in message, message
    if "masked" in kind and argument in ("k", "eye_like k", "diagonal_index"):
        assert "masked" in message, message
    if kind.startswith("lazy") and argument in ("x", "out", "onnx x"):
        assert "uninitialized" in message, message
