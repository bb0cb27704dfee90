"""Static checks: the return types of `eye`, `eye_like` and the operator
adapters follow the input, as a user's ``mypy --strict`` sees them.

Checked by mypy, not run (pytest does not collect this file: no ``test_``
prefix), in two environments; a wrong ``assert_type`` here fails both:

- ``test_typing.py`` (the ``tests`` session): torch and JAX installed, so
  their lines check the real types;
- the ``lint`` session: no torch, no JAX. Their types are Any there, which
  checks that a user without them loses nothing else: NumPy's results stay
  exact and ``OtherArray`` (any other library's array) keeps its type.

CuPy ships no type information: ``cupy.ndarray`` is Any in both.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, assert_type

import array_api_strict
import cupy
import dask.array as da
import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt
import torch
from torch.distributed.tensor import DTensor

import eyelike.onnx
import eyelike.openvino
from eyelike import eye, eye_like

Matrix32 = np.ndarray[tuple[int, int], np.dtype[np.float32]]
Matrix = np.ndarray[tuple[int, int], np.dtype[Any]]


class OtherArray:
    """Stands for any other library's array type."""

    @property
    def shape(self) -> tuple[int, ...]:
        return (2, 2)


def reported(b: int) -> torch.Tensor:
    # Issue 36: under --strict this was "Returning Any from function declared
    # to return Tensor".
    return eye(2, 3, batch_shape=b, xp=torch)


def check_eye(
    out32: npt.NDArray[np.float32],
    other: OtherArray,
    tensor: torch.Tensor,
    namespace: ModuleType,
    unknown: Any,
) -> None:
    # No xp, or NumPy's: a NumPy array, float64 unless dtype says otherwise
    # (its type when it is a NumPy type or dtype object, else unknown).
    assert_type(eye(3), npt.NDArray[np.float64])
    assert_type(eye(np.int64(2), 3, k=1, batch_shape=4), npt.NDArray[np.float64])
    assert_type(eye(3, dtype="int8"), npt.NDArray[Any])
    assert_type(eye(3, dtype=bool), npt.NDArray[Any])
    assert_type(eye(3, dtype=np.float32), npt.NDArray[np.float32])
    assert_type(eye(3, dtype=np.dtype(np.int8)), npt.NDArray[np.int8])
    assert_type(eye(3, xp=np), npt.NDArray[np.float64])
    assert_type(eye(3, xp=np, dtype=np.uint16), npt.NDArray[np.uint16])
    assert_type(eye(3, xp=None, dtype="int8"), npt.NDArray[Any])
    # Another library's namespace: its array type, whatever the dtype.
    assert_type(eye(2, 3, batch_shape=4, xp=torch), torch.Tensor)
    assert_type(eye(3, xp=torch, dtype=torch.int8, device="cpu"), torch.Tensor)
    assert_type(eye(3, xp=jnp), jax.Array)
    assert_type(eye(3, xp=jnp, dtype=jnp.bfloat16), jax.Array)
    assert_type(eye(3, xp=cupy), cupy.ndarray)
    # Namespaces with no overload, one typed only as a module (what
    # array_api_compat.array_namespace returns), an unknown one: Any.
    assert_type(eye(3, xp=da), Any)
    assert_type(eye(3, xp=array_api_strict), Any)
    assert_type(eye(3, xp=namespace), Any)
    assert_type(eye(3, xp=unknown), Any)
    # out: that array itself, whatever its type.
    assert_type(eye(3, out=out32), npt.NDArray[np.float32])
    assert_type(eye(3, out=other), OtherArray)
    assert_type(eye(3, xp=torch, out=tensor), torch.Tensor)
    assert_type(eye(3, xp=namespace, out=out32), npt.NDArray[np.float32])


def check_eye_like(
    m32: Matrix32,
    masked: np.ma.MaskedArray[tuple[int, int], np.dtype[np.float32]],
    out8: npt.NDArray[np.int8],
    other: OtherArray,
    tensor: torch.Tensor,
    parameter: torch.nn.Parameter,
    dtensor: DTensor,
    array: jax.Array,
) -> None:
    # NumPy: the shape and dtype types of x; dtype= keeps the shape type and
    # gives its own (a NumPy type or dtype object) or an unknown one.
    assert_type(eye_like(m32), Matrix32)
    assert_type(eye_like(m32, k=-1), Matrix32)
    assert_type(eye_like(m32, dtype="int8"), Matrix)
    assert_type(
        eye_like(m32, dtype=np.int8), np.ndarray[tuple[int, int], np.dtype[np.int8]]
    )
    assert_type(
        eye_like(m32, dtype=np.dtype(np.int16)),
        np.ndarray[tuple[int, int], np.dtype[np.int16]],
    )
    # An ndarray subclass gives itself, as np.zeros_like does.
    assert_type(
        eye_like(masked), np.ma.MaskedArray[tuple[int, int], np.dtype[np.float32]]
    )
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
    assert_type(eye_like(other), OtherArray)
    assert_type(eye_like(other, dtype="int8"), OtherArray)
    # out: that array itself.
    assert_type(eye_like(m32, out=out8), npt.NDArray[np.int8])
    assert_type(eye_like(tensor, out=tensor), torch.Tensor)
    # Unknown in, unknown out.
    unknown: Any = m32
    assert_type(eye_like(unknown), Any)


def check_onnx(
    m32: Matrix32, parameter: torch.nn.Parameter, array: jax.Array, other: OtherArray
) -> None:
    # As eye_like: x's type (dtype, an ONNX enum, keeps only NumPy's shape).
    assert_type(eyelike.onnx.eye_like(m32), Matrix32)
    assert_type(eyelike.onnx.eye_like(m32, k=1), Matrix32)
    assert_type(eyelike.onnx.eye_like(m32, dtype=11), Matrix)
    assert_type(eyelike.onnx.eye_like(parameter, dtype=1), torch.Tensor)
    assert_type(eyelike.onnx.eye_like(array), jax.Array)
    assert_type(eyelike.onnx.eye_like(other), OtherArray)


def check_openvino(
    tensor: torch.Tensor,
    parameter: torch.nn.Parameter,
    array: jax.Array,
    index: npt.NDArray[np.int64],
    other: OtherArray,
    unknown: Any,
) -> None:
    eye9 = eyelike.openvino.eye
    # Python ints and NumPy inputs: a NumPy array (of the output type).
    assert_type(eye9(3, 4, 2, output_type="i32"), npt.NDArray[Any])
    assert_type(eye9(3, 4, np.int64(-1), [2], output_type="f32"), npt.NDArray[Any])
    assert_type(eye9(index, 2, 0, index, output_type="f32"), npt.NDArray[Any])
    # Array inputs of one namespace: its array type.
    assert_type(eye9(tensor, 3, 0, output_type="f32"), torch.Tensor)
    assert_type(eye9(2, 3, 0, parameter, output_type="f32"), torch.Tensor)
    assert_type(eye9(array, array, 0, (2,), output_type="bf16"), jax.Array)
    assert_type(eye9(2, other, 0, output_type="f32"), OtherArray)
    assert_type(eye9(unknown, 2, 0, output_type="f32"), Any)
