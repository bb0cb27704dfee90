"""The CuPy backend: the library's rules (its devices, the dtypes it has,
aligned outputs) and `eye`, which fills an output with the ElementwiseKernels
of ``kernels.py``, launch by launch as ``planning.py`` plans.

CuPy is imported inside the functions only, so a NumPy-only install never
touches CUDA. The output comes from ``cupy.empty``: the kernel writes every
element exactly once, which is the whole memory traffic of the operation.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from typing import Any

import numpy as np

from ..._validate.dtypes import DTypeError, is_ml_dtype, numpy_dtype
from ..._validate.text import no_usable_device, show
from .._base import Backend, Build
from .kernels import fill, kernel_path
from .planning import VECTOR_FROM_BYTES, check_alignment, offsets_dtype, plan

__all__ = [
    "CuPyBackend",
    "check_dtype",
    "check_usable",
    "empty_meta",
    "eye",
    "fill",
    "kernel_path",
    "vector_from",
]


class CuPyBackend(Backend):
    """CuPy: GPU memory, NumPy dtypes less those CuPy lacks, strided outs."""

    name = "cupy"
    namespaces = ("cupy", "array_api_compat.cupy")
    takes = frozenset({"out", "order"})
    _standard = "array_api_compat.cupy"
    _scratch = 0  # the kernels write the output, and nothing else

    def device(self, device: Any) -> Any:
        if (isinstance(device, int) and not isinstance(device, bool)) or hasattr(
            device, "id"
        ):
            check_usable(device)
            return cuda_device(device)
        msg = f"device must be a CUDA device id or cupy.cuda.Device; got {show(device)}"
        raise ValueError(msg)

    def dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        dt, itemsize = numpy_dtype(dtype, "cupy")
        return check_dtype(dt), itemsize

    def _move_k(self, k: Any, device: Any) -> Any:
        """``k`` on the result's device (None: the current one): `_clamp`'s
        first step, CuPy's own (the contract has no such hook)."""
        import cupy

        target = cupy.cuda.Device() if device is None else device
        if k.device.id == target.id:
            return k
        with target:  # (through the host: no peer access needed)
            return cupy.asarray(k.get())

    def _clamp(self, k: Any, n_rows: int, n_cols: int, device: Any) -> Any:
        # One pass over k, straight into the type the kernels read, where the
        # default (clip, astype to int64, then int32) moves k three times: as
        # many bytes as the output when matrices are small. The bounds fit
        # k's own type, so the clip cannot wrap.
        import cupy

        k = self._move_k(k, device)
        info = np.iinfo(k.dtype)
        with k.device:
            clamped = cupy.empty(k.shape, dtype=offsets_dtype(n_rows, n_cols))
            lo, hi = max(-n_rows, info.min), min(n_cols, info.max)
            return cupy.clip(k, lo, hi, out=clamped)

    def _out_strides(self, out: Any) -> tuple[int, ...] | None:
        if out.size:  # (an empty out is never stored to)
            long = tuple(
                s for s, n in zip(out.strides, out.shape, strict=True) if n > 1
            )
            check_alignment(out.data.ptr, out.itemsize, long)
        return tuple(s // out.itemsize for s in out.strides)

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        return np.asarray(x.get())

    def eye(self, build: Build) -> Any:
        # Every call passes here before CuPy allocates: one with no device,
        # or eye_like's (x's), was not checked yet.
        check_usable(build.device)
        return eye(build)


def check_dtype(dt: np.dtype[Any], why: str = "") -> np.dtype[Any]:
    """``dt`` if CuPy can make arrays of it (``why`` ends the message): of
    ml_dtypes' types CuPy 14 knows bfloat16 only (its kernels see CuPy's
    ``bfloat16`` class), and refuses float8 and the others at allocation."""
    if is_ml_dtype(dt) and dt.name != "bfloat16":
        msg = (
            f"dtype {dt.name} is not supported by CuPy{why}; "
            "of the ml_dtypes types CuPy has bfloat16 only"
        )
        raise DTypeError(msg)
    return dt


def empty_meta(ndim: int, dtype: np.dtype[Any]) -> Any:
    """An empty CuPy array of ``ndim`` dimensions: what a Dask array of CuPy
    chunks carries as its ``meta``."""
    import cupy

    check_usable()  # CuPy allocates even this on a device
    return cupy.empty((0,) * ndim, dtype=dtype)


# CuPy's count of CUDA devices, once it has seen one, so a call on a working
# GPU pays one global read: CUDA counts a process's devices once, when it
# initialises (a GPU lost later fails in CuPy's own calls, which no message
# of ours would explain better). Only the calls that fail ask again.
_count = 0


def check_usable(device: Any = None) -> None:
    """Refuse (ValueError) a call where CuPy has no usable CUDA device (no
    device, no driver or one too old for CuPy's runtime), or not ``device``
    (an id, or an object with ``.id``; None: the current one), before
    anything is allocated: CuPy's own errors come at the first allocation,
    a ``CUDARuntimeError`` about the driver or an invalid device ordinal.
    The first message is the command line's too (`no_usable_device`)."""
    global _count
    if not _count:
        import cupy

        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception:  # CUDARuntimeError: no driver, or no runtime to load
            count = 0
        if count <= 0:
            msg = no_usable_device("cupy", "CUDA", device)
            raise ValueError(msg)
        _count = count
    index = device if isinstance(device, int) else getattr(device, "id", None)
    if isinstance(index, int) and not 0 <= index < _count:
        msg = (
            f"device={show(device)}: this machine has {_count} CUDA "
            f"device{'s' if _count > 1 else ''} (ids 0 to {_count - 1})"
        )
        raise ValueError(msg)


def cuda_device(device: Any) -> Any:
    """A ``cupy.cuda.Device`` from a device id or any object with ``.id``."""
    import cupy

    return cupy.cuda.Device(getattr(device, "id", device))


def eye(build: Build) -> Any:
    """Fill ``build.out`` (or a new CuPy array of memory ``build.order``) on
    the current or requested device: `CuPyBackend.eye`, and each chunk of a
    Dask array of CuPy chunks. ``build.k``: a Python int or an integer array
    (NumPy or CuPy) broadcastable to the batch dims, clamped."""
    import cupy

    shape, k, device, out = build.shape, build.k, build.device, build.out
    if out is not None:
        where: Any = out.device
    elif device is not None:
        where = cuda_device(device)
    else:
        where = contextlib.nullcontext()
    with where:
        if out is None:
            out = cupy.empty(shape, dtype=build.dtype, order=build.order)
        if out.size == 0:
            return out
        launches = plan(
            shape,
            k if isinstance(k, int) else None,
            out.itemsize,
            contiguous=out.flags.c_contiguous,
            address=out.data.ptr,
            vector_from=vector_from(),
        )
        fill(out, k, launches)
    return out


def vector_from() -> int:
    """`plan`'s ``vector_from`` for `eye`: `VECTOR_FROM_BYTES`, or none under
    ROCm, whose 64-lane wavefronts the vector kernel's warp exchange (for
    CUDA's 32 lanes) does not fit."""
    return sys.maxsize if _rocm() else VECTOR_FROM_BYTES


@functools.cache
def _rocm() -> bool:
    import cupy

    return bool(cupy.cuda.runtime.is_hip)
