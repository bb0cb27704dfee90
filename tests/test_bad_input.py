"""Every bad input gets the right exception, naming parameter and value,
before anything is allocated; an ``out`` is left untouched."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import raises_before_allocating

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


def test_jax_without_x64_names_the_fix() -> None:
    jax = pytest.importorskip("jax")
    if jax.config.jax_enable_x64:
        pytest.skip("x64 is enabled")
    with pytest.raises(TypeError, match="jax_enable_x64"):
        eye(2, xp=jax.numpy, dtype="float64")


def test_k_from_another_namespace_refused() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="k must be"):
        eye(2, batch_shape=2, k=torch.tensor([0, 1]))


def test_torch_bad_device() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="device"):
        eye(2, xp=torch, device="nonsense")


def test_public_errors_are_builtin() -> None:
    # Callers catch TypeError/ValueError; no private exception types leak.
    assert not [n for n in dir(eyelike) if n.endswith("Error")]
