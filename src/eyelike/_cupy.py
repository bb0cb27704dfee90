"""The CuPy backend: the library's rules, and one ElementwiseKernel family,
``eyelike_eye``, whose CUDA source is ``kernels/eye.cuh``.

CuPy is imported inside the functions only, so a NumPy-only install never
touches CUDA. The output comes from ``cupy.empty``: the kernel writes every
element exactly once, which is the whole memory traffic of the operation.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.resources
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from array_api_compat import is_cupy_namespace

from . import _dtypes
from ._backend import Backend

__all__ = [
    "OP_PER_MATRIX",
    "OP_SCALAR",
    "CuPyBackend",
    "check_dtype",
    "cuda_device",
    "eye",
    "kernel_path",
]

# ``i`` is CuPy's loop index (always ptrdiff_t): narrowing it before ``%``
# keeps the division 32-bit when the output is small enough (I = int).
OP_SCALAR = "out = eyelike_value<T, I>((I)i % mat_size, n_cols, k);"
OP_PER_MATRIX = (
    "I b = (I)i / mat_size; "
    "out = eyelike_value<T, I>((I)i - b * mat_size, n_cols, kk[b]);"
)
_INT32_LIMIT = 2**31  # I = int iff the flat index fits in it


class CuPyBackend(Backend):
    """CuPy: GPU memory, NumPy dtypes less those CuPy lacks, strided outs."""

    name = "cupy"
    module = "cupy"
    compat_module = "array_api_compat.cupy"
    needs_gpu = True

    @staticmethod
    def recognises(xp: ModuleType) -> bool:
        return bool(is_cupy_namespace(xp))

    def resolve_device(self, device: Any) -> Any:
        if (isinstance(device, int) and not isinstance(device, bool)) or hasattr(
            device, "id"
        ):
            return cuda_device(device)
        msg = f"device must be a CUDA device id or cupy.cuda.Device; got {device!r}"
        raise ValueError(msg)

    def resolve_dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        dt = check_dtype(_dtypes.from_numpy(dtype, self.name))
        return dt, dt.itemsize

    def scratch_bytes(self, n_rows: int, n_cols: int, k: Any) -> int:
        return 0

    def strides(self, out: Any) -> tuple[int, ...] | None:
        return tuple(s // out.itemsize for s in out.strides)

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        return np.asarray(x.get())

    def eye(
        self,
        shape: tuple[int, ...],
        k: Any,
        dtype: Any,
        device: Any,
        out: Any,
        *,
        chunks: Any = None,
        like: Any = None,
    ) -> Any:
        return eye(shape, k, dtype, device, out)


def check_dtype(dt: np.dtype[Any], why: str = "") -> np.dtype[Any]:
    """``dt`` if CuPy can make arrays of it (``why`` ends the message)."""
    if dt.type.__module__ == "ml_dtypes":
        msg = f"dtype {dt.name} is not supported by CuPy{why}"
        raise TypeError(msg)
    return dt


def cuda_device(device: Any) -> Any:
    """A ``cupy.cuda.Device`` from a device id or any object with ``.id``."""
    import cupy

    return cupy.cuda.Device(getattr(device, "id", device))


def kernel_path() -> Path:
    """Where ``eye.cuh`` is: inside the installed wheel, or the source tree.

    A wheel carries it as ``eyelike/kernels/eye.cuh``; an editable install or
    a checkout reads the top-level ``kernels/`` folder of the repository.
    """
    packaged = importlib.resources.files("eyelike") / "kernels" / "eye.cuh"
    if packaged.is_file():
        return Path(str(packaged))
    source = Path(__file__).resolve().parents[2] / "kernels" / "eye.cuh"
    if source.is_file():
        return source
    msg = f"eyelike's CUDA source is missing: looked in {packaged} and {source}"
    raise FileNotFoundError(msg)


@functools.lru_cache(maxsize=1)
def _source() -> str:
    return kernel_path().read_text(encoding="utf-8")


@functools.lru_cache(maxsize=4)
def _kernel(per_matrix: bool, wide: bool) -> Any:
    """The kernel for one k mode and index width; CuPy compiles it lazily,
    once per output dtype and device, and caches the binary."""
    import cupy

    index = "int64" if wide else "int32"
    ctype = "long long" if wide else "int"
    k_param = f"raw {index} kk" if per_matrix else f"{index} k"
    # The source goes in as the preamble, not an #include, so its text is
    # part of CuPy's cache key: an edited header can never serve a stale
    # binary.
    preamble = f"{_source()}\ntypedef {ctype} I;\n"
    return cupy.ElementwiseKernel(
        f"{index} n_cols, {index} mat_size, {k_param}",
        "T out",
        OP_PER_MATRIX if per_matrix else OP_SCALAR,
        "eyelike_eye_batched_k" if per_matrix else "eyelike_eye",
        preamble=preamble,
    )


def eye(
    shape: tuple[int, ...], k: Any, dtype: np.dtype[Any], device: Any, out: Any
) -> Any:
    """Fill ``out`` (or a new CuPy array) on the current or requested device.

    ``k`` is a Python int or an integer array (NumPy or CuPy) broadcastable
    to the batch dims, already clamped into ``[-n_rows, n_cols]``.
    """
    import cupy

    if out is not None:
        where: Any = out.device
    elif device is not None:
        where = cuda_device(device)
    else:
        where = contextlib.nullcontext()
    with where:
        if out is None:
            out = cupy.empty(shape, dtype=dtype)
        if out.size == 0:
            return out
        n_rows, n_cols = shape[-2:]
        wide = out.size >= _INT32_LIMIT
        index = np.int64 if wide else np.int32
        args = (index(n_cols), index(n_rows * n_cols))
        if isinstance(k, int):
            _kernel(False, wide)(*args, index(k), out)
        else:
            batch = shape[:-2]
            kk = cupy.broadcast_to(cupy.asarray(k, dtype=index), batch)
            _kernel(True, wide)(*args, cupy.ascontiguousarray(kk).ravel(), out)
    return out
