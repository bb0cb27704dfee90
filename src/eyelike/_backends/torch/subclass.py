"""torch's tensor subclasses (the class of ``eye_like``'s ``x`` or of
``out``): told by name (`is_tensor_type`), and built as torch's own
``zeros_like`` and in-place writes treat them: as torch.Tensor
(`builds_plain`), a DTensor shard by shard (`_dtensor`), any other as the
plain eye copied into it (`build`)."""

from __future__ import annotations

import math
import sys
from typing import Any

from ..._validate.offsets import along_batch, shifted
from .._base import Build
from .build import general

__all__ = ["build", "builds_plain", "held_bytes", "is_tensor_type"]


def is_tensor_type(array_type: type) -> bool:
    """Whether ``array_type`` is ``torch.Tensor`` or a subclass (nn.Parameter
    ...), by name (guard rule 2): torch need not be imported to ask."""
    if array_type.__name__ == "Tensor" and array_type.__module__ == "torch":
        return True  # torch.Tensor itself: no loop to trace
    for c in array_type.__mro__[1:]:
        if c.__name__ == "Tensor" and c.__module__ == "torch":
            return True
    return False


def builds_plain(torch: Any, cls: type) -> bool:
    """Whether a tensor of class ``cls`` is built as a plain one:
    ``nn.Parameter``'s kind, and the tensors of torch's own modes (whose
    mode makes every factory call give its kind)."""
    if cls is torch.Tensor or cls.__module__.startswith("torch._subclasses."):
        return True
    if (
        getattr(cls, "__torch_function__", None)
        is not torch._C._disabled_torch_function_impl
    ):
        return False
    # (nn.Parameter's kind: no __torch_dispatch__ of its own either.)
    return not any(
        "__torch_dispatch__" in vars(c)
        for c in cls.__mro__[: cls.__mro__.index(torch.Tensor)]
    )


def build(torch: Any, request: Build) -> Any:
    """``request``, whose ``out`` or ``like`` is not built as a plain one: a
    DTensor shard by shard (`_dtensor`); any other as the plain eye copied
    by one ``copy_`` into ``out`` or its own ``empty_like(x)`` (which
    completes ``out`` or leaves it as it was); one that refuses a plain
    tensor is refused in words naming its class."""
    out = request.out
    target, name = (request.like, "x") if out is None else (out, "out")
    if _distributed(target) is not None:
        return _dtensor(torch, request, target, name)
    eye = general(torch, request.shape, request.k, request.dtype, request.device, None)
    try:
        if out is not None:
            out.copy_(eye)
            return out
        return torch.empty_like(target, dtype=request.dtype).copy_(eye)
    except (RuntimeError, TypeError, NotImplementedError) as exc:
        msg = (
            f"{name} is a {type(target).__name__}, a torch.Tensor subclass whose "
            f"copy_ does not take the eye as a plain tensor ({exc}); give "
            f"{'an out' if out is not None else 'x'} of torch.Tensor, or convert "
            f"the result"
        )
        raise TypeError(msg) from exc


def _distributed(x: Any) -> Any:
    """``torch.distributed.tensor`` where ``x`` is a DTensor (so imported)."""
    distributed = sys.modules.get("torch.distributed.tensor")
    if distributed is None or not isinstance(x, distributed.DTensor):
        return None
    return distributed


def held_bytes(of: Any, shape: tuple[int, ...], nbytes: int) -> int:
    """`Backend._held_bytes`: a DTensor's shard's."""
    distributed = _distributed(of)
    if distributed is None:
        return nbytes
    local, _ = _shard(shape, of.device_mesh, tuple(of.placements), distributed.Shard)
    return nbytes * math.prod(local) // math.prod(shape)


def _dtensor(torch: Any, request: Build, target: Any, name: str) -> Any:
    """A DTensor like ``x``, with the mesh and placements ``torch.zeros_like``
    gives, or ``out`` filled through its local shard: each rank builds only
    its own shard (no full-size tensor, no collective), whose offsets are
    ``k[b + b0] + r0 - c0`` (`shifted`) at ``(b0, r0, c0)`` in the whole.
    Placements other than ``Shard`` and ``Replicate`` are refused before
    anything is written."""
    from torch.distributed.tensor import DTensor, Replicate, Shard

    out, placements = request.out, tuple(target.placements)
    if out is None:
        # As torch.zeros_like: a partial sum of zeros is replicated zeros.
        placements = tuple([Replicate() if p.is_partial() else p for p in placements])
    for p in placements:
        if type(p) is not Shard and type(p) is not Replicate:
            msg = (
                f"{name} is a DTensor placed {p} on its mesh: eyelike builds "
                f"a DTensor shard by shard for Shard and Replicate placements "
                f"only (redistribute {name} to those first)"
            )
            raise ValueError(msg)
    mesh, k = target.device_mesh, request.k
    shape, offset = _shard(request.shape, mesh, placements, Shard)
    if type(k) is not int:
        if hasattr(k, "full_tensor"):  # a DTensor k: a batch's worth of values
            k = k.full_tensor()
        window = [slice(o, o + n) for o, n in zip(offset[:-2], shape[:-2], strict=True)]
        k = torch.as_tensor(k)
        k = k[along_batch(k.shape, request.shape[:-2], window, lambda n: slice(None))]
    k = shifted(k, offset[-2] - offset[-1], shape[-2], shape[-1])
    if out is not None:
        # (Without grad: an out that requires grad was refused unless grad
        # is off, and its local shard is then the tensor itself, no view.)
        with torch.no_grad():
            general(torch, shape, k, request.dtype, request.device, out.to_local())
        return out
    local = general(torch, shape, k, request.dtype, request.device, None)
    return DTensor.from_local(
        local,
        mesh,
        placements,
        run_check=False,
        shape=torch.Size(request.shape),
        stride=torch._prims_common.make_contiguous_strides_for(request.shape),
    )


def _shard(
    shape: tuple[int, ...], mesh: Any, placements: tuple[Any, ...], shard: Any
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """This rank's piece of a DTensor of ``shape``: its shape, and its offset
    in the whole. Each ``Shard(d)`` splits dimension ``d`` of the piece so
    far as ``torch.chunk`` does (chunks of ``ceil(size / n)``, the last ones
    short or empty), mesh dimension by mesh dimension."""
    local, offset = list(shape), [0] * len(shape)
    coordinate = mesh.get_coordinate()
    if coordinate is None:  # a rank outside the mesh holds nothing
        return (0,) * len(shape), tuple(offset)
    for mesh_dim, p in enumerate(placements):
        if type(p) is shard:
            size = local[p.dim]
            chunk = -(-size // mesh.size(mesh_dim))
            start = min(chunk * coordinate[mesh_dim], size)
            local[p.dim] = min(chunk, size - start)
            offset[p.dim] += start
    return tuple(local), tuple(offset)
