"""Static checks: the return types of `eye`, `eye_like` and the operator
adapters follow the input, as a user's ``mypy --strict`` and pyright strict
see them, where only NumPy is installed (torch, JAX, CuPy: in
``typing_returns_libraries.py``).

Checked, not run (pytest does not collect this file: no ``test_`` prefix),
by ``test_typing.py``: mypy and pyright where torch, JAX and CuPy are
installed, pyright again where they are not; and by mypy in the ``lint``
session, where they are not. A wrong ``assert_type`` fails each; an Unknown
in a signature fails pyright (``reportUnknownMemberType``).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, assert_type

import numpy as np
import numpy.typing as npt

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


def check_eye(
    out32: npt.NDArray[np.float32],
    other: OtherArray,
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
    # A namespace typed only as a module (what
    # array_api_compat.array_namespace returns), an unknown one: Any.
    assert_type(eye(3, xp=namespace), Any)
    assert_type(eye(3, xp=unknown), Any)
    # out: that array itself, whatever its type.
    assert_type(eye(3, out=out32), npt.NDArray[np.float32])
    assert_type(eye(3, out=other), OtherArray)
    assert_type(eye(3, xp=namespace, out=out32), npt.NDArray[np.float32])


def check_eye_like(
    m32: Matrix32,
    masked: np.ma.MaskedArray[tuple[int, int], np.dtype[np.float32]],
    out8: npt.NDArray[np.int8],
    other: OtherArray,
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
    # Any other array: its own type, with or without dtype=.
    assert_type(eye_like(other), OtherArray)
    assert_type(eye_like(other, dtype="int8"), OtherArray)
    # out: that array itself.
    assert_type(eye_like(m32, out=out8), npt.NDArray[np.int8])
    # Unknown in, unknown out.
    unknown: Any = m32
    assert_type(eye_like(unknown), Any)


def check_onnx(m32: Matrix32, other: OtherArray, unknown: Any) -> None:
    # As eye_like: x's type (dtype, an ONNX enum, keeps only NumPy's shape).
    assert_type(eyelike.onnx.eye_like(m32), Matrix32)
    assert_type(eyelike.onnx.eye_like(m32, k=1), Matrix32)
    assert_type(eyelike.onnx.eye_like(m32, dtype=11), Matrix)
    assert_type(eyelike.onnx.eye_like(other), OtherArray)
    assert_type(eyelike.onnx.eye_like(unknown), Any)


def check_openvino(
    index: npt.NDArray[np.int64], other: OtherArray, unknown: Any
) -> None:
    eye9 = eyelike.openvino.eye
    # Python ints and NumPy inputs: a NumPy array (of the output type).
    assert_type(eye9(3, 4, 2, output_type="i32"), npt.NDArray[Any])
    assert_type(eye9(3, 4, np.int64(-1), [2], output_type="f32"), npt.NDArray[Any])
    assert_type(eye9(index, 2, 0, index, output_type="f32"), npt.NDArray[Any])
    # Another array input: its type.
    assert_type(eye9(2, other, 0, output_type="f32"), OtherArray)
    assert_type(eye9(unknown, 2, 0, output_type="f32"), Any)
    assert_type(eye9(2, 3, unknown, output_type="f32"), Any)
