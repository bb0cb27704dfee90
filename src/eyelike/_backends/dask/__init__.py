"""The Dask backend: a lazy batched eye, chunked along the batch dimensions.

Every chunk holds whole matrices and is made, when computed, by the NumPy
backend, or by the CuPy backend where the result's chunks are CuPy arrays
(``eye_like`` of a Dask array of CuPy chunks, or Dask's ``array.backend``
set to ``"cupy"``). The graph is one ``Blockwise`` layer fed by the chunk
shapes (as ``dask.array.ones`` builds its own): nothing is computed and no
per-chunk task is materialised at call time. `_block`, the one adapter of
the eager fill to a block, is cubed's too.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..._validate.offsets import shifted
from ..._validate.size import known_shape
from .. import cupy as _cupy
from .. import numpy as _numpy
from .._base import Backend, Build, host_device, namespace_info
from .chunks import Chunks, batch_chunks, k_chunks

__all__ = ["DaskBackend", "eye"]


class DaskBackend(Backend):
    """Dask: lazy, immutable arrays whose chunks are NumPy or CuPy arrays."""

    name = "dask"
    namespaces = ("dask.array", "array_api_compat.dask.array")
    takes = frozenset({"chunks", "order"})
    _standard = "array_api_compat.dask.array"
    _numpy_dtypes = True
    _scratch = 0  # nothing is made until computed, chunk by chunk

    def device(self, device: Any) -> Any:
        # Its chunks' host, or array-api-compat's name for the device of a
        # Dask array (of CuPy chunks too), as its own namespace takes them.
        info = namespace_info(self._xp)
        return host_device(device, "Dask", () if info is None else info.devices())

    def shape_of(self, x: Any, name: str) -> tuple[int, ...]:
        # Arrays of unknown chunk sizes report nan dimensions.
        hint = f" (for Dask, call {name}.compute_chunk_sizes() first)"
        return known_shape(x, name, hint)

    def _move_k(self, k: Any, device: Any) -> Any:
        return k  # one device: Dask reads k's blocks where it makes the output's

    def _clip(self, k: Any, lo: int, hi: int) -> Any:
        # Dask's own clip hands each chunk the bounds as Python ints;
        # array-api-compat's makes them Dask arrays of NumPy chunks, which a
        # k of CuPy chunks cannot meet in one ufunc (a TypeError at compute).
        return _dask_array().clip(k, lo, hi)

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        computed = x.compute()
        get = getattr(computed, "get", None)  # CuPy chunks
        return np.asarray(get() if callable(get) else computed)

    def eye(self, build: Build) -> Any:
        return eye(build)


def _dask_array() -> Any:
    """``dask.array``, imported on first use (typed ``Any``: it is untyped)."""
    import dask.array

    return dask.array


def _on_gpu(like: Any) -> bool:
    """Whether the chunks are made by the CuPy backend (``like``'s meta, or
    Dask's config, looked at without importing CuPy)."""
    if like is not None:
        meta = getattr(like, "_meta", None)
        return type(meta).__module__.partition(".")[0] == "cupy"
    import dask

    return bool(dask.config.get("array.backend", "numpy") == "cupy")


def _k_array(k: Any, batch: tuple[int, ...], bc: Chunks) -> Any:
    """``k`` as a Dask array whose blocks line up with the output's."""
    da = _dask_array()
    if not isinstance(k, da.Array):
        k = np.asarray(k, dtype=np.int64)
        return da.from_array(k, chunks=k_chunks(k.shape, batch, bc))
    return k.rechunk(k_chunks(tuple(k.shape), batch, bc))


def _block(
    shape: tuple[int, ...],
    k: Any,
    *,
    out_dtype: np.dtype[Any],
    gpu: bool = False,
    order: Literal["C", "F"] = "C",
    shift: int | None = None,
) -> Any:
    """One block of a lazy eye (Dask's and cubed's), made by the eager NumPy
    (or CuPy) fill: whole matrices, or, with ``shift`` (``r0 - c0`` of its
    first element), a piece of them holding diagonals of its own."""
    if not (gpu or isinstance(k, int)):
        get = getattr(k, "get", None)  # a CuPy block of k, copied back
        k = np.asarray(get() if callable(get) else k, dtype=np.int64)
    if shift is not None:
        k = shifted(k, shift, *shape[-2:])
    fill = _cupy.eye if gpu else _numpy.eye
    return fill(Build(shape, k, out_dtype, order=order))


def eye(build: Build) -> Any:
    """A lazy Dask array of the batched eye ``build`` asks for, chunked along
    the batch dims only: ``build.chunks`` (any form ``dask.array`` takes, for
    the batch dims or for all, if it keeps matrices whole; None: Dask's
    ``array.chunk-size``), or ``like``'s batch chunks and chunk type. ``k``
    is an int or an integer array (NumPy, or Dask).

    Raises
    ------
    ValueError
        ``chunks`` is not a chunking of the batch dims into whole matrices.
    TypeError
        CuPy chunks were asked for in a dtype CuPy lacks.
    """
    from dask.base import tokenize
    from dask.layers import ArrayChunkShapeDep

    shape, k, order = build.shape, build.k, build.order
    dtype = np.dtype(build.dtype)
    gpu = _on_gpu(build.like)
    if gpu:
        _cupy.check_dtype(dtype, " (the chunks' library)")
    batch = shape[:-2]
    bc = batch_chunks(build.chunks, shape, dtype, build.like)
    out_chunks = (*bc, *((n,) for n in shape[-2:]))
    if gpu:
        meta = _cupy.empty_meta(len(shape), dtype)
    else:
        meta = np.empty((0,) * len(shape), dtype=dtype)
    index = tuple(range(len(shape)))
    if isinstance(k, int) or (isinstance(k, np.ndarray) and k.ndim == 0):
        k_args: tuple[Any, ...] = (int(k), None)
    else:
        k_arr = _k_array(k, batch, bc)
        k_args = (k_arr, index[len(batch) - k_arr.ndim : len(batch)])
    name = "eyelike-eye-" + tokenize(shape, out_chunks, k_args, dtype, gpu, order)
    return _dask_array().blockwise(
        _block,
        index,
        ArrayChunkShapeDep(out_chunks),
        index,
        *k_args,
        name=name,
        dtype=dtype,
        meta=meta,
        align_arrays=False,
        concatenate=True,
        out_dtype=dtype,
        gpu=gpu,
        order=order,
    )
