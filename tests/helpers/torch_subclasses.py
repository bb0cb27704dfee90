"""torch tensor subclasses of the tests' own, and a rank of a fake process
group (for the subclass tests and the conformance matrix's torch modes).

Where torch is missing, importing this module skips the importing test
module (with a reason) instead of failing its collection."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("torch", reason="the tests' tensor subclasses need torch")

import torch


@contextlib.contextmanager
def rank_of(world: int, rank: int, mesh_shape: tuple[int, ...]) -> Iterator[Any]:
    """A device mesh as ``rank`` of ``world`` sees it, in this one process
    (torch's fake process group: no collective runs, none is needed)."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)
    try:
        yield init_device_mesh("cpu", mesh_shape)
    finally:
        dist.destroy_process_group()


class Wrapped(torch.Tensor):
    """A ``__torch_dispatch__`` wrapper subclass of the tests' own: every
    operation runs on the tensor inside, and its results are wrapped."""

    wrapped: Any
    refuse_plain: bool = False

    @staticmethod
    def __new__(cls, inner: Any) -> Any:
        made = torch.Tensor._make_wrapper_subclass(
            cls, inner.shape, dtype=inner.dtype, device=inner.device,
            strides=inner.stride(),
        )  # fmt: skip
        made.wrapped = inner
        return made

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(
        cls, func: Any, types: Any, args: Any = (), kwargs: Any = None
    ) -> Any:
        from torch.utils import _pytree

        plain = [
            a for a in _pytree.tree_leaves(args)
            if type(a) is torch.Tensor
        ]  # fmt: skip
        if cls.refuse_plain and plain:
            msg = f"{func} got a plain tensor"
            raise RuntimeError(msg)

        def unwrap(t: Any) -> Any:
            return t.wrapped if isinstance(t, Wrapped) else t

        def wrap(t: Any) -> Any:
            return cls(t) if type(t) is torch.Tensor else t

        got = func(
            *_pytree.tree_map(unwrap, args), **_pytree.tree_map(unwrap, kwargs or {})
        )
        return _pytree.tree_map(wrap, got)


class Strict(Wrapped):
    """One whose operations refuse a plain tensor (as DTensor's do)."""

    refuse_plain = True


class Derived(torch.Tensor):
    """A ``__torch_function__`` subclass: torch's functions keep its type."""
