"""The reference implementation, on any Array API namespace.

Written without in-place writes, so it also runs on JAX (under ``jax.jit``
too) and lazily on Dask: the mask ``col - row == k`` is built once per matrix
shape and broadcast over the batch, then cast to the requested dtype.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["eye"]


def eye(
    xp: Any,
    shape: tuple[int, ...],
    k: Any,
    dtype: Any,
    device: Any,
    out: Any | None,
) -> Any:
    """The batched eye of ``shape`` in namespace ``xp`` (or filled into ``out``).

    ``k`` is a Python int, or an integer array of ``xp`` whose shape
    broadcasts to the batch dimensions; either way already clamped into
    ``[-n_rows, n_cols]`` so it fits the namespace's index dtype.
    """
    if math.prod(shape) == 0:  # nothing to write: no (R, C) scratch either
        return xp.zeros(shape, dtype=dtype, device=device) if out is None else out
    n_rows, n_cols = shape[-2:]
    index = xp.__array_namespace_info__().default_dtypes(device=device)["indexing"]
    limit = xp.iinfo(index).max
    if max(n_rows, n_cols) > limit:
        # arange would wrap in a narrow index type (JAX without x64).
        name = "n_rows" if n_rows > limit else "n_cols"
        msg = (
            f"{name}={max(n_rows, n_cols)} exceeds this namespace's index type "
            f"({index}, at most {limit})"
        )
        raise ValueError(msg)
    rows = xp.arange(n_rows, dtype=index, device=device)
    cols = xp.arange(n_cols, dtype=index, device=device)
    diff = cols[None, :] - rows[:, None]
    if isinstance(k, int):
        mask = diff == k
    else:
        mask = diff == xp.asarray(k, dtype=index, device=device)[..., None, None]
    # ``copy=True``: a fresh, writeable array, never a broadcast view.
    result = xp.astype(xp.broadcast_to(mask, shape), dtype, copy=True)
    if out is None:
        return result
    out[...] = result
    return out
