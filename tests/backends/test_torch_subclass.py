"""torch's tensor subclasses, as torch treats them: a DTensor's eye is a
DTensor built shard by shard (checked on every rank of a fake process
group, so that a wrong shard offset fails), an ``out`` DTensor is filled
through its shard or refused before any write, and any other subclass gets
its own ``empty_like`` and ``copy_``.

Bug (issue 36): ``eye(3, batch_shape=2, k=[0, 1], out=d)`` of a DTensor
``d`` zeroed it, then failed in torch's index_put ("got mixed torch.Tensor
and DTensor"); ``eye_like(d)`` gave a plain, full-size tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import reference

import eyelike

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available():
    pytest.skip("this torch build has no torch.distributed", allow_module_level=True)

# (After the skips above: the helper imports torch.)
from helpers.torch_subclasses import Derived, Strict, Wrapped, rank_of  # noqa: E402
from torch.distributed.tensor import (  # noqa: E402
    DTensor,
    Partial,
    Replicate,
    Shard,
)
from torch.distributed.tensor import empty as dt_empty  # noqa: E402
from torch.distributed.tensor import full as dt_full  # noqa: E402


def expected_shard(
    full: np.ndarray[Any, Any], mesh: Any, placements: tuple[Any, ...]
) -> np.ndarray[Any, Any]:
    """This rank's piece of ``full``, by torch's documented rule (each
    ``Shard(d)`` splits dimension ``d`` as ``torch.chunk`` does, mesh
    dimension by mesh dimension), not by eyelike's arithmetic."""
    piece = torch.from_numpy(full)
    coordinate = mesh.get_coordinate()
    for mesh_dim, p in enumerate(placements):
        if isinstance(p, Shard):
            chunks = torch.chunk(piece, mesh.size(mesh_dim), dim=p.dim)
            i = coordinate[mesh_dim]
            piece = chunks[i] if i < len(chunks) else piece.narrow(p.dim, 0, 0)
    return piece.numpy()


# (mesh shape, placements, global shape): batch, row and column shards,
# uneven ones with an empty shard, two mesh dimensions on one tensor
# dimension, and replicas.
LAYOUTS = [
    ((4,), (Shard(0),), (5, 3, 4)),
    ((4,), (Shard(1),), (2, 7, 5)),
    ((4,), (Shard(2),), (2, 5, 9)),
    ((3,), (Shard(0),), (7, 6)),
    ((3,), (Shard(1),), (6, 7)),
    ((4,), (Replicate(),), (2, 3, 3)),
    ((2, 2), (Shard(0), Shard(2)), (3, 5, 6)),
    ((2, 2), (Shard(1), Shard(1)), (2, 9, 4)),
    ((2, 2), (Replicate(), Shard(1)), (1, 2, 6, 6)),
]
OFFSETS = [0, 1, -2, 5, 2**70, -(2**70), "per-matrix"]


def _k_for(k: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """(the k to pass, the plain k of the oracle)."""
    if k != "per-matrix":
        return k, k
    batch = shape[:-2]
    values = (np.arange(int(np.prod(batch))) % 5 - 2).reshape(batch)
    return torch.tensor(values), values.tolist()


@pytest.mark.parametrize(("mesh_shape", "placements", "shape"), LAYOUTS)
@pytest.mark.parametrize("k", OFFSETS)
def test_eye_like_of_a_dtensor_on_every_rank(
    mesh_shape: tuple[int, ...], placements: tuple[Any, ...], shape: Any, k: Any
) -> None:
    world = int(np.prod(mesh_shape))
    passed, plain = _k_for(k, shape)
    full = reference(shape[:-2], shape[-2], shape[-1], plain).astype(np.float32)
    for rank in range(world):
        with rank_of(world, rank, mesh_shape) as mesh:
            x = dt_empty(shape, device_mesh=mesh, placements=placements)
            got = eyelike.eye_like(x, k=passed)
            like = torch.zeros_like(x)
            assert type(got) is DTensor
            assert got.device_mesh == like.device_mesh
            assert got.placements == like.placements
            assert (got.shape, got.dtype, got.stride()) == (
                like.shape,
                like.dtype,
                like.stride(),
            )
            local = got.to_local()
            assert local.shape == like.to_local().shape
            np.testing.assert_array_equal(
                local.numpy(), expected_shard(full, mesh, placements), f"rank {rank}"
            )


@pytest.mark.parametrize(("mesh_shape", "placements", "shape"), LAYOUTS)
@pytest.mark.parametrize("k", [1, -1, "per-matrix"])
def test_out_dtensor_is_filled_shard_by_shard(
    mesh_shape: tuple[int, ...], placements: tuple[Any, ...], shape: Any, k: Any
) -> None:
    world = int(np.prod(mesh_shape))
    passed, plain = _k_for(k, shape)
    full = reference(shape[:-2], shape[-2], shape[-1], plain).astype(np.int32)
    for rank in range(world):
        with rank_of(world, rank, mesh_shape) as mesh:
            out = dt_full(shape, 7, dtype=torch.int32, device_mesh=mesh,
                          placements=placements)  # fmt: skip
            got = eyelike.eye(
                shape[-2], shape[-1], batch_shape=shape[:-2], k=passed, out=out
            )
            assert got is out
            assert out.placements == placements
            np.testing.assert_array_equal(
                out.to_local().numpy(), expected_shard(full, mesh, placements)
            )
            again = dt_full(shape, 7, dtype=torch.int32, device_mesh=mesh,
                            placements=placements)  # fmt: skip
            assert eyelike.eye_like(again, k=passed, out=again) is again
            assert torch.equal(again.to_local(), out.to_local())


def test_the_reported_call_with_a_parameter_under_no_grad() -> None:
    """The reported sequence, and FSDP2's ``reset_parameters`` pattern: an
    nn.Parameter DTensor filled under no_grad as nn.init.eye_ fills it."""
    with rank_of(2, 1, (2,)) as mesh:
        d = dt_full((2, 3, 3), 7.0, device_mesh=mesh, placements=[Shard(0)])
        eyelike.eye(3, batch_shape=2, k=[0, 1], out=d)
        np.testing.assert_array_equal(d.to_local().numpy(), [np.eye(3, k=1)])
        w = torch.nn.Parameter(dt_full((6, 4), 7.0, device_mesh=mesh,
                                       placements=[Shard(0)]))  # fmt: skip
        with pytest.raises(ValueError, match="out requires grad"):
            eyelike.eye(6, 4, out=w)
        assert (w.to_local() == 7).all()
        with torch.no_grad():
            assert eyelike.eye(6, 4, out=w) is w
        assert w.requires_grad
        np.testing.assert_array_equal(w.to_local().detach().numpy(), np.eye(6, 4)[3:])


def test_placements_it_cannot_build_are_refused_before_any_write() -> None:
    with rank_of(2, 0, (2,)) as mesh:
        partial = DTensor.from_local(
            torch.full((2, 3, 3), 7.0), mesh, [Partial()], run_check=False
        )
        for k in (0, [0, 1]):
            with pytest.raises(ValueError, match=r"out is a DTensor placed P\(sum\)"):
                eyelike.eye(3, batch_shape=2, k=k, out=partial)
            assert (partial.to_local() == 7).all()
        # A fresh eye of a partial sum is replicated, as torch.zeros_like's.
        got = eyelike.eye_like(partial, k=[0, 1])
        assert got.placements == torch.zeros_like(partial).placements == (Replicate(),)
        np.testing.assert_array_equal(
            got.to_local().numpy(), reference((2,), 3, 3, [0, 1])
        )


def _inside(t: Any) -> Any:
    """The plain tensor a test subclass holds (or is)."""
    return t.wrapped if isinstance(t, Wrapped) else t.as_subclass(torch.Tensor)


@pytest.mark.parametrize("k", [1, [0, -1]])
def test_other_subclasses_get_their_own_like_and_copy(k: Any) -> None:
    want = reference((2,), 3, 4, k)
    for make in (lambda t: Wrapped(t), lambda t: t.as_subclass(Derived)):
        x = make(torch.zeros(2, 3, 4))
        got = eyelike.eye_like(x, k=k, dtype=torch.float64)
        assert type(got) is type(torch.zeros_like(x)) is type(x)
        assert got.dtype == torch.float64
        np.testing.assert_array_equal(_inside(got).numpy(), want)
        out = make(torch.full((2, 3, 4), 7.0))
        assert eyelike.eye(3, 4, batch_shape=2, k=k, out=out) is out
        np.testing.assert_array_equal(_inside(out).numpy(), want)


def test_a_subclass_that_refuses_plain_tensors_is_refused_by_name() -> None:
    out = Strict(torch.full((2, 3, 3), 7.0))
    for k in (0, [0, 1]):
        with pytest.raises(
            TypeError, match=r"out is a Strict, a torch\.Tensor subclass"
        ):
            eyelike.eye(3, batch_shape=2, k=k, out=out)
        assert (out.wrapped == 7).all()


def test_parameter_and_fake_tensors_are_built_as_plain_tensors() -> None:
    """zeros_like of an nn.Parameter is a plain tensor; a FakeTensor's mode
    makes fakes of the plain build (as before)."""
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    p = torch.nn.Parameter(torch.zeros(2, 3, 3))
    for k in (0, [0, 1]):
        got = eyelike.eye_like(p, k=k)
        assert type(got) is type(torch.zeros_like(p)) is torch.Tensor
        assert not got.requires_grad
    with FakeTensorMode():
        x = torch.zeros(2, 3, 3)
        for k in (0, [0, 1]):
            assert type(eyelike.eye_like(x, k=k)) is FakeTensor


@pytest.mark.parametrize("k", [1, [0, 1, -1, 2]])
def test_dtensor_under_torch_compile_fullgraph(k: Any) -> None:
    """Tensor parallel models are compiled: the shard's eye is traced in one
    graph (its offsets from the mesh's coordinate, not torch's private
    helper, whose int() of a size breaks the graph)."""
    import torch._dynamo

    with rank_of(2, 1, (2,)) as mesh:
        x = dt_full((4, 3, 3), 1.0, device_mesh=mesh, placements=[Shard(0)])
        torch._dynamo.reset()
        f = torch.compile(
            lambda x: x + eyelike.eye_like(x, k=k), backend="eager", fullgraph=True
        )
        got = f(x)
        assert type(got) is DTensor
        assert got.placements == (Shard(0),)
        want = 1 + reference((4,), 3, 3, k)[2:]
        np.testing.assert_array_equal(got.to_local().numpy(), want)


def test_memory_is_judged_by_the_shard_a_rank_holds(monkeypatch: Any) -> None:
    """A DTensor larger than one machine's memory is what sharding is for:
    each rank is refused only where its own shard does not fit."""
    from eyelike._validate import size

    monkeypatch.setattr(size, "physical_memory", lambda: 1 << 20)
    with rank_of(8, 3, (8,)) as mesh:
        x = dt_empty((8, 256, 256), device_mesh=mesh, placements=[Shard(0)])  # 2 MiB
        got = eyelike.eye_like(x, k=[0, 1, 2, 3, 4, 5, 6, 7])
        np.testing.assert_array_equal(got.to_local().numpy(), [np.eye(256, k=3)])
        whole = dt_empty((8, 256, 256), device_mesh=mesh, placements=[Replicate()])
        with pytest.raises(MemoryError):
            eyelike.eye_like(whole)
        with pytest.raises(MemoryError):
            eyelike.eye_like(torch.empty(8, 256, 256))
