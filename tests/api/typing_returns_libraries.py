"""Static checks: the return types of `eye`, `eye_like` and the operator
adapters for torch, JAX, CuPy and the other namespaces, as a user's
``mypy --strict`` and pyright strict see them (NumPy's:
``typing_returns.py``).

Checked, not run, by ``test_typing.py`` (mypy and pyright, where torch, JAX
and CuPy are installed: their lines check the real types) and by mypy in
the ``lint`` session, where none is installed: their types are Any there,
and no other result changes.

CuPy ships no type information: ``cupy.ndarray`` is Any to mypy, Unknown to
pyright (whose strict mode reports the user's own uses of it: ignored on
those lines, as a user would).
"""

from __future__ import annotations

from typing import Any, assert_type

import array_api_strict
import cupy  # pyright: ignore[reportMissingTypeStubs]
import dask.array as da
import jax
import jax.numpy as jnp
import torch
from torch.distributed.tensor import DTensor

import eyelike.onnx
import eyelike.openvino
from eyelike import eye, eye_like


def reported(b: int) -> torch.Tensor:
    # Issue 36: under --strict this was "Returning Any from function declared
    # to return Tensor".
    return eye(2, 3, batch_shape=b, xp=torch)


def check_eye(tensor: torch.Tensor) -> None:
    # Another library's namespace: its array type, whatever the dtype.
    assert_type(eye(2, 3, batch_shape=4, xp=torch), torch.Tensor)
    assert_type(eye(3, xp=torch, dtype=torch.int8, device="cpu"), torch.Tensor)
    assert_type(eye(3, xp=jnp), jax.Array)
    assert_type(eye(3, xp=jnp, dtype=jnp.bfloat16), jax.Array)
    assert_type(eye(3, xp=cupy), cupy.ndarray)  # pyright: ignore[reportUnknownMemberType]
    # Namespaces with no overload: Any.
    assert_type(eye(3, xp=da), Any)
    assert_type(eye(3, xp=array_api_strict), Any)
    # out: that array itself.
    assert_type(eye(3, xp=torch, out=tensor), torch.Tensor)


def check_eye_like(
    tensor: torch.Tensor,
    parameter: torch.nn.Parameter,
    dtensor: DTensor,
    array: jax.Array,
) -> None:
    # A torch tensor keeps its class, as torch.zeros_like keeps it (a DTensor,
    # a subclass of the caller's own), but for nn.Parameter: a plain tensor.
    assert_type(eye_like(tensor), torch.Tensor)
    assert_type(eye_like(tensor, dtype=torch.int8, k=1), torch.Tensor)
    assert_type(eye_like(parameter), torch.Tensor)
    assert_type(eye_like(dtensor), DTensor)
    assert_type(eye_like(dtensor, k=[0, 1]), DTensor)
    # Any other array: its own type, with or without dtype=.
    assert_type(eye_like(array), jax.Array)
    assert_type(eye_like(array, dtype=jnp.int8), jax.Array)
    # out: that array itself.
    assert_type(eye_like(tensor, out=tensor), torch.Tensor)


def check_onnx(parameter: torch.nn.Parameter, array: jax.Array) -> None:
    # As eye_like: x's type (an nn.Parameter: a plain tensor).
    assert_type(eyelike.onnx.eye_like(parameter, dtype=1), torch.Tensor)
    assert_type(eyelike.onnx.eye_like(array), jax.Array)


def check_openvino(
    tensor: torch.Tensor, parameter: torch.nn.Parameter, array: jax.Array
) -> None:
    eye9 = eyelike.openvino.eye
    # Array inputs of one namespace: its array type (torch's: a plain tensor).
    assert_type(eye9(tensor, 3, 0, output_type="f32"), torch.Tensor)
    assert_type(eye9(2, 3, 0, parameter, output_type="f32"), torch.Tensor)
    assert_type(eye9(array, array, 0, (2,), output_type="bf16"), jax.Array)
