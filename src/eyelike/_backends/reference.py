"""The reference build: an eye on any Array API namespace, from what it has
(``docs/internals.rst``, "Adding a backend", lists it), written without
in-place writes so that it runs on any: the generic backend's,
array-api-strict's, and JAX's index check. What is missing is named, before
anything is built, in a ``TypeError``; a function that fails on the
standard's call, in a ``RuntimeError`` chained to its own.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._base import Backend, Build

__all__ = ["array_api_eye", "check_index_fits", "mask", "needs", "on", "over_batch"]


def on(device: Any) -> dict[str, Any]:
    """``device=`` for a namespace call, only where one was asked for."""
    return {} if device is None else {"device": device}


def check_index_fits(n_rows: int, n_cols: int, index: Any, xp: Any) -> None:
    """Refuse a matrix whose rows or columns ``xp``'s index dtype cannot
    count (an arange or iota would wrap: JAX without x64)."""
    limit = xp.iinfo(index).max
    if max(n_rows, n_cols) > limit:
        name = "n_rows" if n_rows > limit else "n_cols"
        msg = (
            f"{name}={max(n_rows, n_cols)} exceeds this namespace's index type "
            f"({index}, at most {limit})"
        )
        raise ValueError(msg)


class _Named:
    """A namespace whose functions, failing, say which one failed: the error
    names the namespace and the function (its own chained)."""

    def __init__(self, xp: Any) -> None:
        self._xp = xp

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._xp, name)  # (`needs` named any it lacks)
        if not callable(found) or isinstance(found, type):
            return found
        module = self._xp.__name__

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return found(*args, **kwargs)
            except MemoryError:
                raise
            except Exception as exc:
                msg = (
                    f"{module}.{name} failed on a call the Array API standard "
                    f"defines ({type(exc).__name__}: {exc})"
                )
                raise RuntimeError(msg) from exc

        return call


def _route(xp: Any, k: Any) -> str:
    """`_build`'s way to ``k``'s eyes: ``"eye"`` for one offset, ``"mask"``
    for one per matrix, or without ``arange`` each offset's eye ``"stack"``ed."""
    if isinstance(k, int):
        return "eye"
    return "mask" if hasattr(xp, "arange") else "stack"


# The namespace's functions each route calls (`needs` asks for them first).
_CALLS = {
    "eye": ("eye",),
    "mask": ("arange", "asarray", "astype", "iinfo"),
    "stack": ("eye", "stack", "reshape"),
}


def needs(
    xp: Any, shape: tuple[Any, ...], k: Any, out: Any, lazy: bool = False
) -> None:
    """Refuse, before anything is built, a call that needs what ``xp`` lacks:
    item assignment for an ``out``; for a per-matrix ``k``, ``arange`` or
    (for host values) ``stack`` and ``reshape``; each function the build of
    ``shape`` and ``k`` calls (`_build`; ``lazy``: of a batch not known yet)."""
    name, route = xp.__name__, _route(xp, k)
    part, stacked = _CALLS[route], route == "stack"
    if lazy:
        wanted = ("zeros_like", *part)
    elif math.prod(shape) == 0:
        wanted = ("zeros",)
    elif stacked or len(shape) == 2:
        wanted = part
    else:
        wanted = (*part, "broadcast_to", "asarray")  # (`over_batch`)
    stacks = [f for f in ("stack", "reshape") if not hasattr(xp, f)]
    lacking = [f for f in dict.fromkeys(wanted) if not hasattr(xp, f)]
    if out is not None and not hasattr(type(out), "__setitem__"):
        msg = (
            f"out: {name} arrays have no item assignment, so out "
            f"cannot be filled in place; take the result instead"
        )
    elif stacked and (lazy or not isinstance(k, np.ndarray)):
        # (No stacking: a batch not known yet, or offsets not on the host.)
        msg = f"k: {name} has no arange to build a mask from k, " + (
            "for an x whose batch sizes are not known yet; give one int k"
            if lazy
            else f"a {name} array; give k as a Python sequence or NumPy array"
        )
    elif stacked and stacks:
        msg = (
            f"k: one offset per matrix needs {name}.arange, or "
            f"{' and '.join(stacks)}, which it lacks; give one int k"
        )
    elif lacking:
        msg = (
            f"{name} has no {' or '.join(lacking)}, which eyelike needs to "
            f"build this eye"
        )
    else:
        return
    raise TypeError(msg)


def array_api_eye(backend: Backend, build: Build) -> Any:
    """The eye ``build`` asks for on any Array API namespace (``backend``'s),
    or its ``out`` filled with it by one item assignment, never
    half-written. An ``x`` whose batch sizes are not known yet (None) gets
    its own ``zeros_like`` plus the eye, broadcast by the namespace's engine."""
    xp, shape, k, out, like = backend._xp, build.shape, build.k, build.out, None
    if build.like is not None and None in shape:
        like = build.like
    needs(xp, shape, k, out, lazy=like is not None)
    result = _build(backend, _Named(xp), build, on(build.device), like)
    if out is None:
        return result
    try:
        out[...] = result
    except MemoryError:
        raise
    except Exception as exc:
        msg = f"{xp.__name__}: out[...] = eye failed ({type(exc).__name__}: {exc})"
        raise RuntimeError(msg) from exc
    return out


def _build(
    backend: Backend, xp: Any, build: Build, where: dict[str, Any], like: Any
) -> Any:
    """A fresh eye by the functions of ``xp`` (``backend``'s namespace in
    `_Named`, each failure named; ``backend._xp`` itself is asked what it
    has): ``eye`` for one offset, the mask cast for one per matrix, either
    copied over the batch; without ``arange``, the eyes of ``k``'s distinct
    offsets, stacked."""
    shape, k, dtype = build.shape, build.k, build.dtype
    if like is None and math.prod(shape) == 0:  # no (R, C) scratch either
        return xp.zeros(shape, dtype=dtype, **where)
    n_rows, n_cols = shape[-2:]
    route = _route(backend._xp, k)
    if route == "eye":
        # The standard's own eye for one matrix: the namespace's idiom, and
        # the fewest calls (each costs on a wrapper).
        part = xp.eye(n_rows, n_cols, k=k, dtype=dtype, **where)
    elif route == "mask":
        index = backend._index_dtype(build.device)
        check_index_fits(n_rows, n_cols, index, xp)
        part = xp.astype(mask(xp, n_rows, n_cols, k, index, where), dtype)
    else:
        # The eye of each distinct offset, gathered by index: no dense
        # scratch where the namespace is sparse. (Stacked by reference, a
        # matrix each: sparse's take refuses its own index arrays.)
        values, index = np.unique(
            np.broadcast_to(k, shape[:-2]).reshape(-1), return_inverse=True
        )
        eyes = [xp.eye(n_rows, n_cols, k=int(v), dtype=dtype, **where) for v in values]
        return xp.reshape(xp.stack([eyes[i] for i in index]), shape)
    if like is not None:
        return xp.zeros_like(like, dtype=dtype) + part
    return over_batch(xp, part, shape)


def over_batch(xp: Any, part: Any, shape: tuple[int, ...]) -> Any:
    """``part`` (a matrix, or one per offset of ``k``) as a fresh array of
    ``shape``: itself where it has that shape, else copied over the batch
    (never a broadcast view, which cannot be written)."""
    if part.shape == shape:
        return part
    return xp.asarray(xp.broadcast_to(part, shape), copy=True)


def mask(
    xp: Any, n_rows: Any, n_cols: Any, k: Any, index: Any, where: dict[str, Any]
) -> Any:
    """The rule itself, ``col - row == k``, on any namespace: a bool array
    of ``k``'s shape and ``(n_rows, n_cols)`` (``index``: the type it is
    computed in, which holds ``k`` clamped; ``where``: `on`'s device)."""
    rows = xp.arange(n_rows, dtype=index, **where)
    cols = xp.arange(n_cols, dtype=index, **where)
    offsets = xp.asarray(k, dtype=index, **where)[..., None, None]
    return (cols[None, :] - rows[:, None]) == offsets
