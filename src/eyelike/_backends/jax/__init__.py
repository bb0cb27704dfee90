"""The JAX backend: the library's rules, and the batch made in one XLA
computation.

Eagerly each ``jnp`` call is a computation of its own, writing a full-size
array. eyelike jits one function of the shape (static) and ``k`` (traced:
a new offset compiles nothing), two iotas, a compare and a cast, which XLA
fuses into one kernel writing the output once (inlined under an outer
``jit`` or ``vmap``). Its ``out_shardings`` is the output's placement
(`_placement`, under ``jax.set_mesh`` too), so a sharded result is made in
place; on Explicit mesh axes the iotas carry the sharding (`_typed_sharding`),
so each device computes only its shard.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

from ..._validate import dtypes as _dtypes
from ..._validate import size as _size
from ..._validate.offsets import along_batch, clamp_array
from ..._validate.text import no_usable_device, show
from .._base import Backend, Build
from ..reference import check_index_fits

__all__ = ["JaxBackend"]


# JAX's accelerator platforms: asked for where JAX has none, no usable device.
_ACCELERATORS = {"gpu": "GPU", "cuda": "CUDA", "rocm": "ROCm", "tpu": "TPU"}


class JaxBackend(Backend):
    """JAX: immutable arrays on CPU, GPU or TPU devices."""

    name = "jax"
    # (jax.experimental.array_api: the standard's namespace of older JAX.)
    namespaces = ("jax.numpy", "jax.experimental.array_api")
    takes = frozenset()
    _dtype_hint = " (64-bit types need jax.config.update('jax_enable_x64', True))"
    _scratch = False  # one fused computation: the output is all it writes

    def device(self, device: Any) -> Any:
        import jax

        if isinstance(device, str):
            try:  # a platform name: its first device
                return jax.devices(device)[0]
            except RuntimeError:
                kind = _ACCELERATORS.get(device)
                msg = (
                    f"device {show(device)} is not a JAX platform here"
                    if kind is None
                    else no_usable_device("jax", kind, device)
                )
                raise ValueError(msg) from None
        if not isinstance(device, (jax.Device, jax.sharding.Sharding)):
            msg = (
                f"device must be a jax.Device, a jax.sharding.Sharding or a "
                f"platform name; got {show(device)}"
            )
            raise ValueError(msg)
        return device

    def device_of(self, x: Any) -> Any:
        import jax.core

        if isinstance(x, jax.core.Tracer):
            return None  # inside jit or vmap: placement is the caller's
        # One device: that device (as jnp.eye takes it); else the sharding,
        # which the result then carries, as jnp.eye(..., device=) gives.
        devices = x.sharding.device_set
        return next(iter(devices)) if len(devices) == 1 else x.sharding

    def dtype(self, dtype: Any, device: Any) -> tuple[Any, int]:
        import jax

        # 64-bit types come and go with this flag.
        x64 = bool(jax.config.read("jax_enable_x64"))  # type: ignore[no-untyped-call, unused-ignore]
        return self._from_table(dtype, device, (self, device, x64))

    def _dtype_table(self, device: Any) -> dict[str, Any]:
        # (JAX's inspection API takes a sharding as well as a device.)
        table = super()._dtype_table(device)
        # (float8_e8m0fnu too, to be refused by name: it has no exact zero.)
        for name in _dtypes.EXTRA_NAMES:
            dt = getattr(self._xp, name, None)
            if dt is not None:
                table.setdefault(name, dt)
        return table

    def _clamp(self, k: Any, n_rows: int, n_cols: int, device: Any) -> Any:
        # Moved now; clamped in the build's one computation (`_builder`):
        # eagerly, each jnp call is ~10 us.
        import jax.core

        if device is None or isinstance(k, jax.core.Tracer):
            return k  # no placement asked, or inside jit or vmap: the caller's
        if isinstance(device, jax.sharding.NamedSharding):
            # Every device of the output's mesh reads the offsets: all of them.
            spec = jax.sharding.PartitionSpec()
            return jax.device_put(k, jax.sharding.NamedSharding(device.mesh, spec))
        devices = _devices_of(device)
        # (Another sharding of several devices: jit places k with the call.)
        return jax.device_put(k, next(iter(devices))) if len(devices) == 1 else k

    def _held_bytes(
        self, of: Any, shape: tuple[int, ...], nbytes: int, device: Any
    ) -> int:
        return nbytes if self._on_host(device) and not _traced_only() else 0

    def _on_host(self, device: Any) -> bool:
        """Whether an output on ``device`` is in this machine's main memory."""
        import jax

        if device is None:
            return bool(jax.default_backend() == "cpu")
        return all(d.platform == "cpu" for d in _devices_of(device))

    def eye(self, build: Build) -> Any:
        import jax

        shape, k, dtype, device = build.shape, build.k, build.dtype, build.device
        index = self._index_dtype(device)
        placement, off_mesh = None, False
        if device is not None:
            placement, off_mesh = _placement(device, shape, build.like is not None)
        # The sharding of the output's type where it names Explicit axes:
        # the placement's, or under jit the traced x's (as jnp.zeros_like's).
        typed = _typed_sharding(
            placement if placement is not None else _aval_sharding(build.like)
        )
        size = math.prod(shape)
        if type(size) is int:  # (symbolic sizes, jax.export's: XLA judges them)
            if size == 0:
                k = None  # nothing to compute: zeros, no iotas (`_builder`)
            else:
                check_index_fits(shape[-2], shape[-1], index, self._xp)
        # A host value, not jnp.asarray: jit moves it with the call, where an
        # eager conversion would be a computation of its own.
        offsets = np.asarray(k, dtype=index) if isinstance(k, (int, np.ndarray)) else k
        build_it = _builder(self, placement)
        # (typed only where there is one: a static argument less to hash.)
        more = {} if typed is None else {"typed": typed}
        if off_mesh:
            # Eagerly, a placement off the mesh set by jax.set_mesh: jit
            # refuses out_shardings there, so the build runs outside it.
            with jax.sharding.set_mesh(None):
                return build_it(offsets, shape=shape, dtype=dtype, index=index, **more)
        return build_it(offsets, shape=shape, dtype=dtype, index=index, **more)

    def _check_empty(self, shape: tuple[int, ...], itemsize: int, device: Any) -> None:
        # JAX arrays have no strides: only XLA's own limits apply.
        lead = math.prod(itertools.takewhile(bool, shape))
        if lead > 2**60:  # XLA aborts the process (no exception) past this
            msg = (
                f"output shape {shape} has no elements but JAX cannot represent "
                f"it: its leading dimensions multiply past 2**60"
            )
            raise ValueError(msg)
        # XLA spends host memory on an empty array in proportion to the
        # dimensions before its first zero (about 8 bytes each, or more).
        cost = lead * 16
        memory = _size.physical_memory()
        if cost > memory and self._on_host(device):
            msg = (
                f"output shape {shape} has no elements, but JAX needs about "
                f"{cost} bytes to make it, more than this machine's "
                f"{memory} bytes of memory"
            )
            raise MemoryError(msg)


def _devices_of(device: Any) -> Any:
    """The devices of a jax.Device or a sharding."""
    return getattr(device, "device_set", None) or (device,)


def _traced_only() -> bool:
    """Whether this call only traces (under jit, vmap, eval_shape or
    export: XLA allocates the output when the program runs)."""
    # JAX's own flag: the probe compiles.
    try:
        from jax._src.core import trace_state_clean
    except ImportError:  # a JAX without it: a value made now tells
        import jax.core

        return isinstance(jax.numpy.zeros(()), jax.core.Tracer)
    return not trace_state_clean()


@functools.lru_cache(maxsize=64)
def _builder(backend: JaxBackend, placement: Any) -> Any:
    """The jitted batch maker for one output placement (None: the default
    device, or wherever an outer jit puts it); ``k``: the offsets, or None
    for an empty output; ``typed``: the sharding of the output's type
    (`_typed_sharding`), or None."""
    import jax
    from jax import lax

    def build(
        k: Any, *, shape: tuple[int, ...], dtype: Any, index: Any, typed: Any = None
    ) -> Any:
        # (Older JAX has no out_sharding; typed is None there.)
        kwargs = {} if typed is None else {"out_sharding": typed}
        if k is None:  # an empty output
            return backend._xp.zeros(shape, dtype=dtype, **kwargs)
        if k.dtype != index:  # the caller's own array, moved (`JaxBackend._clamp`)
            k = clamp_array(backend._xp, k, shape[-2], shape[-1], index, backend._clip)
        rows = lax.broadcasted_iota(index, shape, len(shape) - 2, **kwargs)
        cols = lax.broadcasted_iota(index, shape, len(shape) - 1, **kwargs)
        k = _resharded(k, shape, typed)
        # k broadcasts against the batch dimensions only.
        return (cols - rows == k[..., None, None]).astype(dtype)

    kwargs = {} if placement is None else {"out_shardings": placement}
    names = ("shape", "dtype", "index", "typed")
    return jax.jit(build, static_argnames=names, **kwargs)


def _placement(device: Any, shape: tuple[int, ...], like: bool) -> tuple[Any, bool]:
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
    if not _traced_only():
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


def _aval_sharding(like: Any) -> Any:
    """The sharding in a traced ``like``'s type (None: not traced, or a JAX
    without shardings in its types)."""
    if like is None:  # (the common call: no import)
        return None
    import jax.core

    typeof = getattr(jax, "typeof", None)
    if typeof is None or not isinstance(like, jax.core.Tracer):
        return None
    return getattr(typeof(like), "sharding", None)


def _typed_sharding(sharding: Any) -> Any:
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


def _resharded(k: Any, shape: tuple[int, ...], typed: Any) -> Any:
    """A traced ``k`` laid out as the output's batch dimensions are, where
    its type names other mesh axes (one sharded along the axis that splits
    the rows: JAX refuses one axis on two dimensions)."""
    import jax

    have = _aval_sharding(k)
    if typed is None or have is None or not _axis_names(have.spec):
        return k
    spec = (*typed.spec, *(None,) * (len(shape) - len(typed.spec)))
    want = along_batch(k.shape, shape[:-2], spec, lambda n: None)
    have_spec = (*have.spec, *(None,) * (k.ndim - len(have.spec)))
    if have_spec == want:
        return k
    P = jax.sharding.PartitionSpec
    return jax.sharding.reshard(k, jax.sharding.NamedSharding(typed.mesh, P(*want)))
