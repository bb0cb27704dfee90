"""The CuPy backend's ElementwiseKernels, whose CUDA source is
``kernels/eye.cuh`` (`kernel_path`): `kernel` builds one (cached), `fill`
runs `plan`'s launches with them (CuPy is imported inside the functions).

The vector path (``eyelike_eye_vector*``): each thread finds the ones of one
64-byte chunk from launch constants, and each warp stores its 32 chunks as
runs of aligned 16-byte pieces, 512 contiguous bytes a store instruction.
The element path (``eyelike_eye*``): one thread per element, any layout.
"""

from __future__ import annotations

import functools
import importlib.resources
from pathlib import Path
from typing import Any

import numpy as np

from .constants import (
    OP_PER_MATRIX,
    OP_SCALAR,
    SUFFIX,
    VECTOR_OPS,
    scalar_params,
    vector_kind,
)
from .planning import Launch, arguments

__all__ = ["fill", "kernel", "kernel_path"]


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
    kind = vector_kind(per_matrix, small)
    # The source is the preamble, not an #include, so its text is part of
    # CuPy's cache key: an edited header never serves a stale binary.
    source = kernel_path().read_text(encoding="utf-8")
    preamble = f"{source}\ntypedef {ctype} I;\ntypedef unsigned {ctype} U;\n"
    params = [
        f"{t} {name}" for name, t in scalar_params(per_matrix, wide, vector, small)
    ]
    if per_matrix:
        params.append(f"raw {'int64' if wide else 'int32'} kk")
    if vector:
        # A raw output and an explicit size=: a thread is a chunk, not an
        # element (CuPy's pattern for such kernels).
        operation = VECTOR_OPS[kind]
        name = f"eyelike_eye_vector{SUFFIX[kind]}"
    else:
        operation = OP_PER_MATRIX if per_matrix else OP_SCALAR
        name = f"eyelike_eye{SUFFIX[kind]}"
    return cupy.ElementwiseKernel(
        ", ".join(params),
        "raw T out" if vector else "T out",
        operation,
        name,
        preamble=preamble,
    )


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
