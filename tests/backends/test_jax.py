"""JAX specifics: shardings (as device= and carried from x, as jnp.eye does),
the device rule (platform names, a ``jax.Device``), the dtype rule (float8
types, float64 without x64), vmap and jit, and one compiled computation per
shape.

The test run has two CPU devices (conftest sets XLA_FLAGS), so shardings over
several devices are real here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import reference

import eyelike

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
P = jax.sharding.PartitionSpec


def _mesh() -> Any:
    devices = jax.devices()
    if len(devices) < 2:
        pytest.skip("needs 2 JAX devices (XLA_FLAGS set before jax was imported)")
    return jax.sharding.Mesh(np.array(devices), ("b",))


@pytest.mark.parametrize("spec", [P("b"), P()], ids=["split", "replicated"])
def test_eye_like_keeps_the_sharding_of_x(spec: Any) -> None:
    # Was AttributeError: 'NamedSharding' object has no attribute 'platform'.
    sharding = jax.sharding.NamedSharding(_mesh(), spec)
    x = jax.device_put(jnp.zeros((4, 3, 5)), sharding)
    result = eyelike.eye_like(x, k=1)
    assert result.sharding == x.sharding
    np.testing.assert_array_equal(np.asarray(result), reference((4,), 3, 5, 1))


@pytest.mark.parametrize("kind", ["named", "single"])
def test_sharding_as_device(kind: str) -> None:
    # JAX's own eye tests check out.sharding == sharding; so does this.
    if kind == "named":
        sharding = jax.sharding.NamedSharding(_mesh(), P("b"))
    else:
        sharding = jax.sharding.SingleDeviceSharding(jax.devices()[-1])
    result = eyelike.eye(3, 4, batch_shape=2, k=-1, xp=jnp, device=sharding)
    assert result.sharding == sharding
    np.testing.assert_array_equal(np.asarray(result), reference((2,), 3, 4, -1))


@pytest.mark.parametrize(
    ("spec", "shape"),
    [(P("b"), (5,)), (P(None, "b"), (2,)), (P(None, None, None, "b"), (2,))],
    ids=["batch-5-over-2", "rows-3-over-2", "more-dims-than-the-output"],
)
def test_sharding_that_does_not_fit_names_device(spec: Any, shape: Any) -> None:
    """Bug: a NamedSharding over 2 devices for a batch of 5 raised JAX's
    IndivisibleError (or an IndexError for a spec longer than the output),
    which names no parameter: eyelike's ValueError names device, the
    sharding and the shape."""
    sharding = jax.sharding.NamedSharding(_mesh(), spec)
    want = (*shape, 3, 4)
    with pytest.raises(ValueError) as info:
        eyelike.eye(3, 4, batch_shape=shape, xp=jnp, device=sharding)
    message = str(info.value)
    assert message.startswith("device: the sharding NamedSharding(")
    assert f"cannot lay out an output of shape {want}" in message
    assert type(info.value) is ValueError


def test_sharding_that_does_not_fit_an_empty_output_names_device() -> None:
    """Bug (review): an empty output returned before the sharding check, so
    JAX's own IndivisibleError came instead of eyelike's message."""
    mesh = _mesh()
    for n_rows, batch, spec in ((3, 0, P(None, None, "b")), (0, 3, P("b"))):
        sharding = jax.sharding.NamedSharding(mesh, spec)
        with pytest.raises(ValueError, match=r"^device: the sharding"):
            eyelike.eye(n_rows, batch_shape=batch, xp=jnp, device=sharding)


def test_device_as_jax_device() -> None:
    device = jax.devices()[-1]
    result = eyelike.eye(3, xp=jnp, device=device)
    assert result.devices() == {device}


def test_bad_device_names_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"device must be a jax\.Device"):
        eyelike.eye(3, xp=jnp, device=object())


def test_jax_device_names() -> None:
    got = eyelike.eye(2, xp=jax.numpy, device="cpu")
    assert next(iter(got.devices())).platform == "cpu"
    with pytest.raises(ValueError, match="device"):
        eyelike.eye(2, xp=jax.numpy, device="nonsense")
    with pytest.raises(ValueError, match="device"):
        eyelike.eye(2, xp=jax.numpy, device=3)


FLOAT8_NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
FLOAT8_NAMES += ["float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3"]
FLOAT8 = [n for n in FLOAT8_NAMES if hasattr(jnp, n)]


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_types(name: str) -> None:
    dtype = getattr(jnp, name)
    result = eyelike.eye(3, 4, k=1, xp=jnp, dtype=dtype)
    assert result.dtype == jnp.eye(3, dtype=dtype).dtype
    np.testing.assert_array_equal(
        np.asarray(result).astype(np.float32), reference((), 3, 4, 1)
    )


def test_float8_without_zero_is_refused() -> None:
    if not hasattr(jnp, "float8_e8m0fnu"):
        pytest.skip("this jax has no float8_e8m0fnu")
    with pytest.raises(TypeError, match="cannot represent 0 and 1"):
        eyelike.eye(3, xp=jnp, dtype=jnp.float8_e8m0fnu)


def test_jax_without_x64_names_the_fix() -> None:
    if jax.config.jax_enable_x64:
        pytest.skip("x64 is enabled")
    with pytest.raises(TypeError, match="jax_enable_x64"):
        eyelike.eye(2, xp=jax.numpy, dtype="float64")


def test_vmap_over_k_and_over_x() -> None:
    ks = jnp.arange(5) - 2
    per_k = jax.vmap(lambda k: eyelike.eye(3, 4, k=k, xp=jnp))(ks)
    np.testing.assert_array_equal(np.asarray(per_k), reference((5,), 3, 4, ks.tolist()))
    xs = jnp.zeros((6, 2, 3))
    per_x = jax.vmap(lambda x: eyelike.eye_like(x, k=-1))(xs)
    np.testing.assert_array_equal(np.asarray(per_x), reference((6,), 2, 3, -1))


def test_jit_with_traced_k() -> None:
    f = jax.jit(lambda x, k: eyelike.eye_like(x, k=k))
    x = jnp.zeros((2, 3, 3))
    for k in (0, 2, -1):
        np.testing.assert_array_equal(np.asarray(f(x, k)), reference((2,), 3, 3, k))


def test_a_new_offset_compiles_nothing() -> None:
    # k is an argument of the one jitted computation, not a constant in it.
    from eyelike._backends import backend_of_namespace
    from eyelike._backends import jax as _jax

    eyelike.eye(5, batch_shape=3, xp=jnp)
    build = _jax._builder(backend_of_namespace(jnp), None)
    before = build._cache_size()
    for k in (-4, 1, 3, 10**30):
        eyelike.eye(5, batch_shape=3, k=k, xp=jnp)
    assert build._cache_size() == before


def test_a_device_off_the_mesh_set() -> None:
    """Bug: under ``jax.set_mesh``, ``eye_like`` of an array on one device
    (and ``eye(device=<a device>)``) raised JAX's "incompatible devices for
    jitted computation" from eyelike's own jitted build, eagerly and under
    jit, where ``jnp.zeros_like`` and ``jnp.eye`` make their result on that
    device (eagerly) or on the mesh (``zeros_like`` under jit).
    (The mesh checks on four devices: ``test_jax_mesh.py``.)"""
    if not hasattr(jax, "set_mesh"):
        pytest.skip("this JAX has no jax.set_mesh")
    _mesh()  # (two devices, or a skip)
    device = jax.devices()[-1]
    x = jax.device_put(jnp.zeros((2, 3, 3)), device)
    with jax.set_mesh(jax.make_mesh((2,), ("b",))):
        for result, want in (
            (eyelike.eye_like(x, k=1), jnp.zeros_like(x)),
            (eyelike.eye(3, batch_shape=2, k=1, xp=jnp, device=device), x),
        ):
            assert result.sharding == want.sharding
            np.testing.assert_array_equal(np.asarray(result), reference((2,), 3, 3, 1))
        # Under jit a result is placed on the mesh: eye_like's as zeros_like's,
        # and a device of eye's is refused naming it (JAX's own error names
        # no parameter).
        ours = jax.jit(lambda: eyelike.eye_like(x, k=[0, 1]))()
        assert ours.sharding == jax.jit(lambda: jnp.zeros_like(x))().sharding
        np.testing.assert_array_equal(np.asarray(ours), reference((2,), 3, 3, [0, 1]))
        for asked in (device, "cpu"):
            with pytest.raises(ValueError, match=r"^device CpuDevice.* off the mesh"):
                jax.jit(lambda d=asked: eyelike.eye(3, xp=jnp, device=d))()
        # A sharding of another mesh: refused naming device too, the empty
        # output as well (a review found JAX's own error, naming an iota).
        other = jax.sharding.NamedSharding(
            jax.sharding.Mesh(np.array(jax.devices()[:1]), ("y",)),
            jax.sharding.PartitionSpec("y"),
        )
        for batch in (2, 0):
            with pytest.raises(ValueError, match=r"^device .* another mesh"):
                jax.jit(
                    lambda b=batch: eyelike.eye(3, batch_shape=b, xp=jnp, device=other)
                )()
