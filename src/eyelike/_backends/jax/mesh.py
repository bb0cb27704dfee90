"""JAX's meshes and shardings, for the JAX backend: an output's placement
(under ``jax.set_mesh`` too), the sharding of a type (Explicit mesh axes),
and a sharded ``k`` laid out as the output's batch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._validate.text import show

__all__ = ["aval_sharding", "placement_of", "resharded", "typed_sharding"]


def placement_of(
    device: Any, shape: tuple[int, ...], like: bool, traced_only: Callable[[], bool]
) -> tuple[Any, bool]:
    """The sharding an output on ``device`` (a device or a sharding) is made
    with, and whether the build must run outside the mesh set by
    ``jax.set_mesh`` (eagerly, a placement off it). Under jit a result is
    placed on that mesh only: ``eye_like`` of an ``x`` on one device there,
    as ``jnp.zeros_like`` does (None); ``eye(device=<one device>)`` or a
    sharding of another mesh is refused naming ``device``, as is a sharding
    that cannot lay out ``shape`` (JAX's own errors name no parameter)."""
    from jax import sharding

    if not isinstance(device, sharding.Sharding):
        placed = sharding.SingleDeviceSharding(device)
    else:
        try:  # (an empty output too: XLA's error would name no parameter)
            device.shard_shape(shape)
        except (ValueError, IndexError, TypeError) as exc:
            msg = (
                f"device: the sharding {show(device, 200)} cannot lay out an "
                f"output of shape {shape} (each dimension it splits must "
                f"divide evenly): {str(exc)[:300]}"
            )
            raise ValueError(msg) from None
        placed = device
    if not hasattr(sharding, "set_mesh"):  # (an older JAX: no mesh of context)
        return placed, False
    mesh = sharding.get_abstract_mesh()
    if mesh.empty:  # (the common call)
        return placed, False
    if not traced_only():
        return placed, bool(getattr(placed, "mesh", None) != sharding.get_mesh())
    if isinstance(placed, sharding.NamedSharding):
        if getattr(placed.mesh, "abstract_mesh", placed.mesh) == mesh:
            return placed, False
        what = "a sharding of another mesh than the one"
    elif mesh.size == 1:
        return placed, False
    elif like:
        return None, False
    else:
        what = f"one device, off the mesh of {mesh.size} devices"
    msg = (
        f"device {show(device, 200)} is {what} set by jax.set_mesh: under "
        f"jax.jit a result is placed on that mesh (pass a NamedSharding of "
        f"it, or None)"
    )
    raise ValueError(msg)


def aval_sharding(like: Any) -> Any:
    """The sharding in a traced ``like``'s type (None: not traced, or a JAX
    without shardings in its types)."""
    if like is None:  # (the common call: no import)
        return None
    import jax

    typeof = getattr(jax, "typeof", None)
    if typeof is None or not isinstance(like, jax.core.Tracer):
        return None
    return getattr(typeof(like), "sharding", None)


def typed_sharding(sharding: Any) -> Any:
    """``sharding`` where JAX's types carry it: a NamedSharding naming mesh
    axes, all of type Explicit. Else None: Auto axes are the compiler's to
    choose (the placement, ``out_shardings``, still holds)."""
    names = _axis_names(getattr(sharding, "spec", None))
    if not names:  # (a device, none, or replicated: the common call, no import)
        return None
    import jax

    explicit = getattr(getattr(jax.sharding, "AxisType", None), "Explicit", None)
    kinds = getattr(sharding.mesh, "axis_types", None)
    if explicit is None or kinds is None or not hasattr(jax.sharding, "reshard"):
        return None  # (JAX before 0.7: its sharding-in-types API was experimental)
    types = dict(zip(sharding.mesh.axis_names, kinds, strict=True))
    return sharding if all(types.get(n) == explicit for n in names) else None


def _axis_names(spec: Any) -> list[str]:
    """The mesh axes a PartitionSpec names."""
    entries = [(e,) if isinstance(e, str) else e for e in spec or ()]
    return [name for e in entries if isinstance(e, tuple) for name in e]


def resharded(k: Any, shape: tuple[int, ...], typed: Any) -> Any:
    """A traced ``k`` laid out as the output's batch dimensions are, where
    its type names other mesh axes (one sharded along the axis that splits
    the rows: JAX refuses one axis on two dimensions)."""
    import jax

    have = aval_sharding(k)
    if typed is None or have is None or not _axis_names(have.spec):
        return k
    batch = len(shape) - 2
    spec = (*typed.spec, *(None,) * (len(shape) - len(typed.spec)))
    lead = batch - k.ndim  # k is aligned with the batch's last dimensions
    want = tuple(
        spec[lead + i] if k.shape[i] == shape[lead + i] else None for i in range(k.ndim)
    )
    have_spec = (*have.spec, *(None,) * (k.ndim - len(have.spec)))
    if have_spec == want:
        return k
    P = jax.sharding.PartitionSpec
    return jax.sharding.reshard(k, jax.sharding.NamedSharding(typed.mesh, P(*want)))
