"""The CuPy backend: the library's rules (its devices, the dtypes it has,
aligned outputs) and `eye`, which fills an output with the ElementwiseKernels
whose CUDA source is the repository's top-level ``kernels/eye.cuh``
(shipped as ``eyelike/kernels``; `kernel`), launch by launch as
``planning.py`` plans (`fill`).

CuPy is imported inside the functions only, so a NumPy-only install never
touches CUDA. The output comes from ``cupy.empty``: the kernel writes every
element exactly once, which is the whole memory traffic of the operation.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.resources
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..._validate.dtypes import DTypeError, is_ml_dtype, numpy_dtype
from ..._validate.offsets import clamp_array
from ..._validate.text import no_usable_device, past_count, show
from .._base import Backend, Build
from .planning import (
    VECTOR_FROM_BYTES,
    Launch,
    arguments,
    check_alignment,
    kernel_spec,
    offsets_dtype,
    plan,
)

__all__ = [
    "CuPyBackend",
    "check_dtype",
    "check_usable",
    "empty_meta",
    "eye",
    "fill",
    "kernel",
    "kernel_path",
    "vector_from",
]


class CuPyBackend(Backend):
    """CuPy: GPU memory, NumPy dtypes less those CuPy lacks, strided outs."""

    name = "cupy"
    namespaces = ("cupy", "array_api_compat.cupy")
    takes = frozenset({"out", "order"})
    _standard = "array_api_compat.cupy"
    _scratch = False  # the kernels write the output, and nothing else

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

    def _clamp(self, k: Any, n_rows: int, n_cols: int, device: Any) -> Any:
        # Moved to the result's device (None: the current one; through the
        # host: no peer access needed), then clamped there.
        import cupy

        target = cupy.cuda.Device() if device is None else device
        if k.device.id != target.id:
            with target:
                k = cupy.asarray(k.get())
        with k.device:
            index = offsets_dtype(n_rows, n_cols)
            return clamp_array(cupy, k, n_rows, n_cols, index, self._clip)

    def _clip(self, k: Any, lo: Any, hi: Any, index: Any) -> Any:
        # One pass over k, straight into the type the kernels read, where a
        # clip, then a cast, moves k twice: as many bytes as the output
        # when matrices are small.
        import cupy

        return cupy.clip(k, lo, hi, out=cupy.empty(k.shape, dtype=index))

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
        raise ValueError(past_count(device, _count, "ids 0", str(_count - 1)))


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


@functools.cache
def vector_from() -> int:
    """`plan`'s ``vector_from`` for `eye`: `VECTOR_FROM_BYTES`, or none under
    ROCm, whose 64-lane wavefronts the vector kernel's warp exchange (for
    CUDA's 32 lanes) does not fit."""
    import cupy

    return sys.maxsize if cupy.cuda.runtime.is_hip else VECTOR_FROM_BYTES


def kernel_path() -> Path:
    """Where ``eye.cuh`` is: ``eyelike/kernels/`` in an installed wheel, the
    repository's top-level ``kernels/`` in a checkout or editable install."""
    packaged = importlib.resources.files("eyelike") / "kernels" / "eye.cuh"
    if packaged.is_file():
        return Path(str(packaged))
    source = Path(__file__).resolve().parents[4] / "kernels" / "eye.cuh"
    if source.is_file():
        return source
    msg = f"eyelike's CUDA source is missing: looked in {packaged} and {source}"
    raise FileNotFoundError(msg)


@functools.lru_cache(maxsize=16)
def kernel(per_matrix: bool, wide: bool, vector: bool, small: bool = False) -> Any:
    """The kernel for one k mode, index width and path (``small``: per-matrix
    k over matrices under one chunk); CuPy compiles it lazily, once per
    output dtype and device, and caches the binary."""
    import cupy

    ctype = "long long" if wide else "int"
    # The source is the preamble, not an #include, so its text is part of
    # CuPy's cache key: an edited header never serves a stale binary.
    source = kernel_path().read_text(encoding="utf-8")
    preamble = f"{source}\ntypedef {ctype} I;\ntypedef unsigned {ctype} U;\n"
    spec = kernel_spec(per_matrix, wide, vector, small)
    return cupy.ElementwiseKernel(*spec, preamble=preamble)


def fill(out: Any, k: Any, launches: tuple[Launch, ...]) -> None:
    """Run ``launches`` (`plan`'s, for ``out`` and ``k``) on the non-empty
    CuPy array ``out``, on the current device: `eye`'s last step, and the
    GPU tests' way to a path `plan` would not choose for a small output."""
    import cupy

    kk: Any = None
    if not isinstance(k, int):
        index = np.int64 if launches[0].wide else np.int32
        kk = cupy.broadcast_to(cupy.asarray(k, dtype=index), out.shape[:-2])
        kk = cupy.ascontiguousarray(kk).ravel()
    mat_size = out.shape[-2] * out.shape[-1]
    for launch in launches:
        compiled = kernel(launch.per_matrix, launch.wide, launch.vector, launch.small)
        args = list(arguments(launch))
        if not launch.vector:
            if kk is not None:
                args.append(kk)
            compiled(*args, out)
            continue
        # A raw array keeps its own ndim in the kernel: pass a 1-D view,
        # sliced only where this launch is one of several (each view is host
        # time).
        flat, part = out.reshape(-1), kk
        if launch.start or launch.stop * mat_size < flat.size:
            flat = flat[launch.start * mat_size : launch.stop * mat_size]
            if kk is not None:
                part = kk[launch.start : launch.stop]
        if part is not None:
            args.append(part)
        # Blocks of whole warps (CuPy's default, named: the kernel's
        # warp-wide stores rely on it), and a thread count of whole warps.
        compiled(*args, flat, size=launch.threads, block_size=128)
