"""JAX's meshes and shardings, as the JAX backend keeps them: the sharding
in a traced array's type (`aval_sharding`), the one an output's type
carries (`typed_sharding`: Explicit mesh axes), a sharded ``k`` laid out as
the output's batch (`resharded`), and a placement under the mesh set by
``jax.set_mesh`` (`on_mesh`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._validate.text import show

__all__ = ["aval_sharding", "on_mesh", "resharded", "typed_sharding"]


def aval_sharding(like: Any) -> Any:
    """The sharding in a traced ``like``'s type (None: not traced, or a JAX
    without shardings in its types)."""
    if like is None:  # (`eye`: the common call, no import to look up)
        return None
    import jax

    typeof = getattr(jax, "typeof", None)
    if typeof is None or not isinstance(like, jax.core.Tracer):
        return None
    return getattr(typeof(like), "sharding", None)


def typed_sharding(sharding: Any) -> Any:
    """``sharding`` where JAX's types carry it: a NamedSharding whose spec
    names mesh axes, every one of them of type Explicit. Else None: Auto
    axes are the compiler's to choose (the placement, `out_shardings`,
    still holds), and nothing else shards."""
    spec = getattr(sharding, "spec", None)
    if spec is None:  # (a device, or none: the common call, no import)
        return None
    import jax

    names = _axis_names(spec)
    if not names:  # (a device, or a replicated sharding: the common call)
        return None
    explicit = getattr(getattr(jax.sharding, "AxisType", None), "Explicit", None)
    mesh = sharding.mesh
    kinds = getattr(mesh, "axis_types", None)
    if explicit is None or kinds is None or not hasattr(jax.sharding, "reshard"):
        return None  # (JAX before 0.7: its sharding-in-types API was experimental)
    types = dict(zip(mesh.axis_names, kinds, strict=True))
    return sharding if all(types.get(n) == explicit for n in names) else None


def _axis_names(spec: Any) -> list[str]:
    """The mesh axes a PartitionSpec names (None: none)."""
    names: list[str] = []
    for entry in spec or ():
        if isinstance(entry, str):
            names.append(entry)
        elif isinstance(entry, tuple):
            names.extend(entry)
    return names


def resharded(k: Any, shape: tuple[int, ...], typed: Any) -> Any:
    """A traced ``k`` laid out as the output's batch dimensions are, where
    its type names mesh axes that differ: a ``k`` sharded along the mesh
    axis that splits the rows would otherwise make JAX refuse the compare
    (one axis on two dimensions). Left as it is where it names none: a
    replicated ``k`` meets any sharding."""
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


def on_mesh(
    sharding: Any,
    placement: Any,
    device: Any,
    like: bool,
    traced_only: Callable[[], bool],
) -> tuple[Any, bool]:
    """``placement`` as a mesh set by ``jax.set_mesh`` (``sharding``: JAX's
    module of that name) lets it be, and whether the build must run outside
    that mesh: eagerly, where the mesh is not ``placement``'s (one device,
    or another mesh's sharding). Under jit a result is placed on that mesh
    only: ``eye_like`` of an ``x`` on one device then places it there, as
    ``jnp.zeros_like`` does (None), and ``eye(device=<one device>)`` is
    refused naming ``device`` (JAX refuses ``jnp.eye``'s with an error
    naming no parameter).

    Raises
    ------
    ValueError
        Under jit, ``device`` is one device, off the mesh of several, or a
        sharding of another mesh.
    """
    if not hasattr(sharding, "set_mesh"):  # (an older JAX: no mesh of context)
        return placement, False
    mesh = sharding.get_abstract_mesh()
    if mesh.empty:  # (the common call)
        return placement, False
    if not traced_only():
        return placement, bool(getattr(placement, "mesh", None) != sharding.get_mesh())
    if isinstance(placement, sharding.NamedSharding):
        if getattr(placement.mesh, "abstract_mesh", placement.mesh) == mesh:
            return placement, False
        what = "a sharding of another mesh than the one"
    elif mesh.size == 1:
        return placement, False
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
