"""The Dask backend: a lazy batched eye, chunked along the batch dimensions.

Every chunk holds whole matrices, made when computed by ``lazy.block``
(the lazy libraries' one adapter of the eager fill, cubed's too): on the NumPy
backend, or on CuPy's where the chunks are CuPy arrays (``eye_like`` of
such an array, or Dask's ``array.backend`` set to ``"cupy"``). The graph is
one ``Blockwise`` layer fed by the chunk shapes (as ``dask.array.ones``
builds its own): no per-chunk task is materialised at call time.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..._validate.offsets import clamp_array
from ..._validate.size import known_shape
from .. import cupy as _cupy
from .._base import Backend, Build, host_device, namespace_info
from ..lazy import Chunks, block, lazy_k, on_host, read, refusal

__all__ = ["DaskBackend"]


class DaskBackend(Backend):
    """Dask: lazy, immutable arrays whose chunks are NumPy or CuPy arrays."""

    name = "dask"
    namespaces = ("dask.array", "array_api_compat.dask.array")
    takes = frozenset({"chunks", "order"})
    _standard = "array_api_compat.dask.array"
    _numpy_dtypes = True
    _scratch = False  # nothing is made until computed, chunk by chunk

    def device(self, device: Any) -> Any:
        # Its chunks' host, or array-api-compat's name for the device of a
        # Dask array (of CuPy chunks too), as its own namespace takes them.
        info = namespace_info(self._xp)
        return host_device(device, "Dask", () if info is None else info.devices())

    def shape_of(self, x: Any, name: str) -> tuple[int, ...]:
        # Arrays of unknown chunk sizes report nan dimensions.
        hint = f" (for Dask, call {name}.compute_chunk_sizes() first)"
        return known_shape(x, name, hint)

    def _clamp(self, k: Any, n_rows: int, n_cols: int, device: Any) -> Any:
        # Not moved: one device (Dask reads k's blocks where it makes the
        # output's).
        index = self._index_dtype(self.device_of(k))
        return clamp_array(self._xp, k, n_rows, n_cols, index, self._clip)

    def _clip(self, k: Any, lo: Any, hi: Any, index: Any) -> Any:
        # Dask's own clip, which hands each chunk the bounds as Python ints;
        # array-api-compat's makes them Dask arrays of NumPy chunks, which a
        # k of CuPy chunks cannot meet in one ufunc (a TypeError at compute).
        import dask.array as da

        return self._xp.astype(da.clip(k, lo, hi), index)

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        return on_host(x.compute())

    def eye(self, build: Build) -> Any:
        """A lazy Dask array of the batched eye ``build`` asks for, chunked as
        ``build.chunks`` says (any form ``dask.array`` takes, for the batch dims
        or all; None: Dask's ``array.chunk-size``), or as ``like``'s batch, with
        its chunk type.

        Raises
        ------
        ValueError
            ``chunks`` is not a chunking of the batch dims into whole matrices.
        TypeError
            CuPy chunks were asked for in a dtype CuPy lacks.
        """
        import dask.array as da
        from dask.base import tokenize
        from dask.layers import ArrayChunkShapeDep

        shape, order = build.shape, build.order
        dtype = np.dtype(build.dtype)
        gpu = _on_gpu(build.like)
        if gpu:
            _cupy.check_dtype(dtype, " (the chunks' library)")
            meta = _cupy.empty_meta(len(shape), dtype)
        else:
            meta = np.empty((0,) * len(shape), dtype=dtype)
        nb = len(shape) - 2
        bc = batch_chunks(build.chunks, shape, dtype, build.like)
        out_chunks = (*bc, *((n,) for n in shape[-2:]))
        index = tuple(range(len(shape)))
        k, k_index = build.k, None
        if not isinstance(k, int):
            k = lazy_k(k, shape[:-2], bc, da.from_array)
            k_index = index[nb - k.ndim : nb]
        name = "eyelike-eye-" + tokenize(
            shape, out_chunks, (k, k_index), dtype, gpu, order
        )
        return da.blockwise(
            block,
            index,
            ArrayChunkShapeDep(out_chunks),
            index,
            k,
            k_index,
            name=name,
            dtype=dtype,
            meta=meta,
            align_arrays=False,
            concatenate=True,
            out_dtype=dtype,
            gpu=gpu,
            order=order,
        )


def _on_gpu(like: Any) -> bool:
    """Whether CuPy makes the chunks (``like``'s are CuPy's, or Dask's config
    says so); CuPy is not imported to ask."""
    if like is not None:
        meta = getattr(like, "_meta", None)
        return type(meta).__module__.partition(".")[0] == "cupy"
    import dask.config

    return bool(dask.config.get("array.backend", "numpy") == "cupy")


def batch_chunks(
    chunks: Any, shape: tuple[int, ...], dtype: np.dtype[Any], like: Any
) -> Chunks:
    """Dask's chunks of the output along the batch dimensions (``like``'s,
    for ``eye_like``), every chunk holding whole matrices."""
    from dask.array.core import normalize_chunks

    if like is not None:
        return tuple(tuple(int(c) for c in dim) for dim in like.chunks[:-2])
    where = f"of the batch dimensions {shape[:-2]} (every chunk holds whole matrices)"
    bad = partial(refusal, chunks, where)
    spec = "auto" if chunks is None else chunks
    found = read(normalize_chunks, spec, shape, dtype, shape[-2:], bad, batch_only=True)
    if found[-2:] != ((shape[-2],), (shape[-1],)):
        msg = f"the matrix dimensions would be split as {found[-2:]}"
        raise bad(msg)
    return found[:-2]
