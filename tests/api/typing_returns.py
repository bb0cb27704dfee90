"""Static checks: the return types of `eye` and `eye_like` follow the input.

Checked by mypy, not run: ``mypy --strict tests/api/typing_returns.py`` (the nox
``lint`` session). Pytest does not collect this file (no ``test_`` prefix).
A wrong ``assert_type`` here fails mypy.

Where torch is not installed (the ``lint`` environment) mypy reads
``torch.Tensor`` as ``Any`` and the torch lines prove nothing; the local
class ``OtherArray`` checks the same rule everywhere.
"""

from __future__ import annotations

from typing import Any, assert_type

import numpy as np
import numpy.typing as npt
import torch

from eyelike import eye, eye_like

Matrix32 = np.ndarray[tuple[int, int], np.dtype[np.float32]]


class OtherArray:
    """Stands for any other library's array type (``jax.Array``, ...)."""


def check_eye(
    out32: npt.NDArray[np.float32], other: OtherArray, tensor: torch.Tensor
) -> None:
    # No xp and no out: a NumPy array, float64 unless dtype says otherwise.
    assert_type(eye(3), npt.NDArray[np.float64])
    assert_type(eye(np.int64(2), 3, k=1, batch_shape=4), npt.NDArray[np.float64])
    assert_type(eye(3, dtype="int8"), npt.NDArray[Any])
    assert_type(eye(3, dtype=np.float32), npt.NDArray[Any])
    # out: that array itself, whatever its type.
    assert_type(eye(3, out=out32), npt.NDArray[np.float32])
    assert_type(eye(3, out=other), OtherArray)
    assert_type(eye(3, xp=torch, out=tensor), torch.Tensor)
    # A namespace: no type can name one module, so Any.
    assert_type(eye(3, xp=np), Any)
    assert_type(eye(3, xp=torch), Any)


def check_eye_like(
    m32: Matrix32,
    masked: np.ma.MaskedArray[tuple[int, int], np.dtype[np.float32]],
    out8: npt.NDArray[np.int8],
    other: OtherArray,
    tensor: torch.Tensor,
) -> None:
    # NumPy: the shape and dtype types of x; dtype= keeps only the shape.
    assert_type(eye_like(m32), Matrix32)
    assert_type(eye_like(m32, k=-1), Matrix32)
    assert_type(eye_like(m32, dtype="int8"), np.ndarray[tuple[int, int], np.dtype[Any]])
    # An ndarray subclass gives a plain ndarray, as at run time.
    assert_type(eye_like(masked), Matrix32)
    # Any other array: its own type, with or without dtype=.
    assert_type(eye_like(other), OtherArray)
    assert_type(eye_like(other, dtype="int8"), OtherArray)
    assert_type(eye_like(tensor), torch.Tensor)
    assert_type(eye_like(tensor, dtype=torch.int8, k=1), torch.Tensor)
    # out: that array itself.
    assert_type(eye_like(m32, out=out8), npt.NDArray[np.int8])
    assert_type(eye_like(tensor, out=tensor), torch.Tensor)
    # Unknown in, unknown out.
    unknown: Any = m32
    assert_type(eye_like(unknown), Any)
