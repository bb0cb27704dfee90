"""Any other Array API namespace, used through the standard only: the
contract's defaults, and the reference build, written without in-place
writes so that it runs on any namespace (array-api-strict's backend is this
one, with its own rules)."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

from ._base import Backend, Build

__all__ = ["GenericBackend", "array_api_eye", "check_index_fits"]


class GenericBackend(Backend):
    """A namespace eyelike has no module for, named after it.

    ``out=`` is filled by item assignment; its outputs count as off the
    host (no memory check), since nothing tells where its devices are.
    """

    def __init__(self, xp: ModuleType | None = None) -> None:
        super().__init__(xp)
        if xp is not None:
            self.name = str(getattr(xp, "__name__", "array_api"))

    def eye(self, build: Build) -> Any:
        return array_api_eye(
            self._xp, build.shape, build.k, build.dtype, build.device, build.out
        )


def check_index_fits(n_rows: int, n_cols: int, index: Any, limit: int) -> None:
    """Refuse a matrix whose rows or columns the index dtype cannot count
    (an arange or iota would wrap: JAX without x64)."""
    if max(n_rows, n_cols) > limit:
        name = "n_rows" if n_rows > limit else "n_cols"
        msg = (
            f"{name}={max(n_rows, n_cols)} exceeds this namespace's index type "
            f"({index}, at most {limit})"
        )
        raise ValueError(msg)


def array_api_eye(
    xp: Any,
    shape: tuple[int, ...],
    k: Any,
    dtype: Any,
    device: Any,
    out: Any | None,
) -> Any:
    """The reference implementation, on any Array API namespace ``xp``.

    Written without in-place writes, so it runs on any namespace: one
    offset takes the namespace's own ``eye``, copied over the batch; one
    offset per matrix the mask ``col - row == k``, built once per matrix
    shape and broadcast over the batch, then cast to the requested dtype.
    ``k`` is a Python int or an integer array of ``xp``, already clamped
    into ``[-n_rows, n_cols]`` so it fits the namespace's index dtype.
    """
    if math.prod(shape) == 0:  # nothing to write: no (R, C) scratch either
        return xp.zeros(shape, dtype=dtype, device=device) if out is None else out
    n_rows, n_cols = shape[-2:]
    if isinstance(k, int):
        # The standard's own eye for one matrix, copied over the batch: the
        # namespace's idiom, and the fewest calls (each costs on a wrapper).
        matrix = xp.eye(n_rows, n_cols, k=k, dtype=dtype, device=device)
        if len(shape) == 2 and out is None:
            return matrix
        if out is not None:
            out[...] = matrix
            return out
        return xp.asarray(xp.broadcast_to(matrix, shape), copy=True)
    index = xp.__array_namespace_info__().default_dtypes(device=device)["indexing"]
    check_index_fits(n_rows, n_cols, index, xp.iinfo(index).max)
    rows = xp.arange(n_rows, dtype=index, device=device)
    cols = xp.arange(n_cols, dtype=index, device=device)
    diff = cols[None, :] - rows[:, None]
    mask = diff == xp.asarray(k, dtype=index, device=device)[..., None, None]
    # ``copy=True``: a fresh, writeable array, never a broadcast view.
    result = xp.astype(xp.broadcast_to(mask, shape), dtype, copy=True)
    if out is None:
        return result
    out[...] = result
    return out
