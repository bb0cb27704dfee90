"""The CuPy backend's ElementwiseKernels, whose CUDA source is
``kernels/eye.cuh`` (`kernel_path`): `kernel` builds one (cached), `run`
makes one launch of `plan` with it.

Two kernel families. The vector path (``eyelike_eye_vector*``) serves every
C-contiguous output of 256 KiB or more (`planning.VECTOR_FROM_BYTES`), for
either k mode and any matrix size: each thread finds the ones of one
64-byte chunk from launch constants, and each warp stores its 32 chunks as
runs of aligned 16-byte pieces, 512 contiguous bytes a store instruction
(per-matrix k over matrices under one chunk has a kernel of its own, whose
chunks span several matrices). The element path (``eyelike_eye*``) serves
strided and transposed outputs, and smaller ones (its launch costs the
host less), one thread per element. ``planning.py`` beside this module
picks the path and computes the vector path's constants, in pure Python
(tested without CuPy); the kernels' operations and parameters are in
``constants.py``.

CuPy is imported inside the functions only.
"""

from __future__ import annotations

import functools
import importlib.resources
from pathlib import Path
from typing import Any

from .constants import (
    FIXED_PARAMS,
    OP_PER_MATRIX,
    OP_SCALAR,
    OP_VECTOR,
    OP_VECTOR_PER_MATRIX,
    OP_VECTOR_PER_SMALL_MATRIX,
    VECTOR_PARAMS,
    vector_kind,
)
from .planning import Launch, arguments

__all__ = ["kernel", "kernel_path", "run"]


def kernel_path() -> Path:
    """Where ``eye.cuh`` is: inside the installed wheel, or the source tree.

    A wheel carries it as ``eyelike/kernels/eye.cuh``; an editable install or
    a checkout reads the top-level ``kernels/`` folder of the repository.
    """
    packaged = importlib.resources.files("eyelike") / "kernels" / "eye.cuh"
    if packaged.is_file():
        return Path(str(packaged))
    source = Path(__file__).resolve().parents[4] / "kernels" / "eye.cuh"
    if source.is_file():
        return source
    msg = f"eyelike's CUDA source is missing: looked in {packaged} and {source}"
    raise FileNotFoundError(msg)


@functools.lru_cache(maxsize=1)
def _source() -> str:
    return kernel_path().read_text(encoding="utf-8")


# The vector kernels by kind (`vector_kind`): operation and name.
_VECTOR_KERNELS = {
    "scalar": (OP_VECTOR, "eyelike_eye_vector"),
    "per_matrix": (OP_VECTOR_PER_MATRIX, "eyelike_eye_vector_batched_k"),
    "small": (OP_VECTOR_PER_SMALL_MATRIX, "eyelike_eye_vector_batched_k_small"),
}


@functools.lru_cache(maxsize=16)
def kernel(per_matrix: bool, wide: bool, vector: bool, small: bool = False) -> Any:
    """The kernel for one k mode, index width and path (and, for per-matrix
    k on the vector path, matrix size class: ``small`` for matrices under
    one chunk); CuPy compiles it lazily, once per output dtype and device,
    and caches the binary."""
    import cupy

    index = "int64" if wide else "int32"
    ctype = "long long" if wide else "int"
    # The source goes in as the preamble, not an #include, so its text is
    # part of CuPy's cache key: an edited header can never serve a stale
    # binary.
    preamble = f"{_source()}\ntypedef {ctype} I;\ntypedef unsigned {ctype} U;\n"
    if vector:
        unsigned = "u" + index
        kind = vector_kind(per_matrix, small)
        params = [
            f"{FIXED_PARAMS.get(name, unsigned)} {name}" for name in VECTOR_PARAMS[kind]
        ]
        if per_matrix:
            params.append(f"raw {index} kk")
        # A raw output and an explicit size=: a thread is a chunk, not an
        # element (CuPy's pattern for such kernels).
        operation, name = _VECTOR_KERNELS[kind]
        return cupy.ElementwiseKernel(
            ", ".join(params), "raw T out", operation, name, preamble=preamble
        )
    k_param = f"raw {index} kk" if per_matrix else f"{index} k"
    return cupy.ElementwiseKernel(
        f"{index} n_cols, {index} mat_size, {k_param}",
        "T out",
        OP_PER_MATRIX if per_matrix else OP_SCALAR,
        "eyelike_eye_batched_k" if per_matrix else "eyelike_eye",
        preamble=preamble,
    )


def run(launch: Launch, out: Any, kk: Any, mat_size: int) -> None:
    """Run one launch of `plan` on ``out`` (per-matrix offsets in ``kk``)."""
    args = list(arguments(launch))
    compiled = kernel(launch.per_matrix, launch.wide, launch.vector, launch.small)
    if not launch.vector:
        if kk is not None:
            args.append(kk)
        compiled(*args, out)
        return
    # A raw array keeps its own ndim in the kernel: pass a 1-D view, sliced
    # only where this launch is one of several (each view is host time).
    flat = out.reshape(-1)
    if launch.start or launch.stop * mat_size < flat.size:
        flat = flat[launch.start * mat_size : launch.stop * mat_size]
        if kk is not None:
            kk = kk[launch.start : launch.stop]
    if kk is not None:
        args.append(kk)
    # Blocks of whole warps (CuPy's default, named: the kernel's warp-wide
    # stores rely on it), and a thread count of whole warps (`plan`).
    compiled(*args, flat, size=launch.threads, block_size=128)
