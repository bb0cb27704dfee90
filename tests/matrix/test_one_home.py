"""Classes of calls where a rule once had two homes that disagreed, each
closed on every namespace installed here (the sample that was reported is
one case of each): the rank limit with a per-matrix ``k`` in every layout;
a ``device=`` on every namespace; a per-matrix ``k`` on another device than
the result's; an ``out`` of every layout whose elements do not share
memory; a per-matrix ``k`` of every integer type at its ends."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from helpers import STANDARD_DTYPES, to_numpy
from helpers import reference as _rule
from numpy.lib.stride_tricks import as_strided

import eyelike

# The most batch dimensions there are (NumPy's 64 dimensions, less the
# matrix's two; NumPy 1 holds 32), all but the last of size 1: per-matrix k
# needs no index for those.
NUMPY_DIMS = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32
RANK_LIMIT_BATCH = (1,) * (NUMPY_DIMS - 3) + (2,)


def reference(
    n_rows: int, n_cols: int, k: Any, batch: tuple[int, ...], dtype: str
) -> np.ndarray[Any, Any]:
    """The rule's values, as ``dtype``."""
    return _rule(tuple(batch), n_rows, n_cols, k).astype(dtype)


def _lazy(xp: Any) -> Any:
    return pytest.importorskip("dask.array")


# ----------------------------------------------------------- the rank limit


@pytest.mark.parametrize("k", [[0, 1], np.array([1, -1]), 1])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_rank_limit_with_a_per_matrix_k_in_every_numpy_layout(
    k: Any, layout: str
) -> None:
    """The eye, in a fresh result of either order and in an out of either,
    never a raw IndexError after out was zeroed (it had 64 index arrays)."""
    want = reference(2, 2, k, RANK_LIMIT_BATCH, "float64")
    fresh = eyelike.eye(2, batch_shape=RANK_LIMIT_BATCH, k=k, order=layout)
    np.testing.assert_array_equal(fresh, want)
    out = np.full((*RANK_LIMIT_BATCH, 2, 2), 7.0, order=layout)
    assert eyelike.eye(2, batch_shape=RANK_LIMIT_BATCH, k=k, out=out) is out
    np.testing.assert_array_equal(out, want)
    strided = np.full((*RANK_LIMIT_BATCH, 2, 4), 7.0, order=layout)[..., ::2]
    eyelike.eye(2, batch_shape=RANK_LIMIT_BATCH, k=k, out=strided)
    np.testing.assert_array_equal(strided, want)


@pytest.mark.parametrize("layout", ["C", "F"])
def test_rank_limit_with_a_per_matrix_k_on_dask(layout: str) -> None:
    da = _lazy(np)
    got = eyelike.eye(2, batch_shape=RANK_LIMIT_BATCH, k=[0, 1], xp=da, order=layout)
    np.testing.assert_array_equal(
        got.compute(), reference(2, 2, [0, 1], RANK_LIMIT_BATCH, "float64")
    )


def test_rank_limit_with_a_per_matrix_k_on_every_namespace(xp: Any) -> None:
    """The eye, or a refusal naming the rank before anything is built (a
    library with fewer dimensions than 64 says so in its own words: the
    call may not reach a build)."""
    k = xp.asarray([0, 1])
    try:
        got = eyelike.eye(2, batch_shape=RANK_LIMIT_BATCH, k=k, xp=xp)
    except (TypeError, ValueError, RuntimeError) as exc:
        said = str(exc)
    else:
        said = ""
    if said:
        assert "dimension" in said or "rank" in said
        return
    np.testing.assert_array_equal(
        to_numpy(got), reference(2, 2, [0, 1], RANK_LIMIT_BATCH, "float64")
    )


# ------------------------------------------------------------- device=


def _refused_devices() -> list[Any]:
    # ("hpu": a device type whose module torch's CPU build lacks.)
    return ["cuda:7", "no-such-device", "hpu", object(), 3.5]


# Ids without an address: pytest-xdist's workers must collect the same names.
@pytest.mark.parametrize(
    "device",
    _refused_devices(),
    ids=["cuda:7", "no-such-device", "hpu", "object", "3.5"],
)
def test_device_is_honoured_or_refused(xp: Any, device: Any) -> None:
    """No namespace drops a device it cannot honour: each refuses it naming
    ``device`` (a ValueError), before anything is built."""
    if (
        isinstance(device, str)
        and device.startswith("cuda")
        and xp.__name__
        in (
            "cupy",
            "torch",
        )
    ):
        pytest.skip("a CUDA device name is one of this library's")
    with pytest.raises(ValueError, match="device"):
        eyelike.eye(3, xp=xp, device=device)


# Ids without an address: pytest-xdist's workers must collect the same names.
@pytest.mark.parametrize(
    "device",
    _refused_devices(),
    ids=["cuda:7", "no-such-device", "hpu", "object", "3.5"],
)
def test_dask_device_is_honoured_or_refused(device: Any) -> None:
    da = _lazy(np)
    with pytest.raises(ValueError, match="device must be None or 'cpu' for Dask"):
        eyelike.eye(3, xp=da, device=device)


def test_dask_takes_its_own_devices() -> None:
    """The host by name, and the device array-api-compat gives a Dask array."""
    da = _lazy(np)
    from array_api_compat import device as device_of

    x = da.zeros((2, 3, 3), chunks=1)
    for device in ("cpu", device_of(x)):
        got = eyelike.eye(3, batch_shape=2, xp=da, device=device)
        np.testing.assert_array_equal(
            got.compute(), reference(3, 3, 0, (2,), "float64")
        )


# ------------------------------------------------- k on another device


def test_k_on_another_device_array_api_strict() -> None:
    """Moved to the result's device, for eye (its default device, or the one
    given) and eye_like (x's), where the library raised from inside the
    build after allocating."""
    xs = pytest.importorskip("array_api_strict")
    default = xs.__array_namespace_info__().default_device()
    other = next(d for d in xs.__array_namespace_info__().devices() if d != default)
    k = xs.asarray([0, 1], device=other)
    want = reference(3, 3, [0, 1], (2,), "float64")
    for device in (None, default, other):
        got = eyelike.eye(3, batch_shape=2, k=k, xp=xs, device=device)
        assert got.device == (default if device is None else device)
        np.testing.assert_array_equal(to_numpy(got), want)
    for where in (default, other):
        x = xs.zeros((2, 3, 3), device=where)
        got = eyelike.eye_like(x, k=k)
        assert got.device == where
        np.testing.assert_array_equal(to_numpy(got), want)
        out = xs.zeros((2, 3, 3), device=where)
        eyelike.eye(3, batch_shape=2, k=k, out=out)
        np.testing.assert_array_equal(to_numpy(out), want)


def test_k_on_another_device_jax() -> None:
    """Moved to the device given (JAX raised "incompatible devices for
    jitted computation" naming eyelike's internal function), or left to JAX
    where no device is given (JAX's rule: a committed input places the
    computation)."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    devices = jax.devices()
    if len(devices) < 2:
        pytest.skip("needs two JAX devices (XLA_FLAGS in conftest.py)")
    want = reference(3, 3, [0, 1], (2,), "float32")
    for k_on, out_on in itertools.permutations(devices[:2]):
        k = jax.device_put(jnp.asarray([0, 1]), k_on)
        got = eyelike.eye(3, batch_shape=2, k=k, xp=jnp, device=out_on)
        assert got.devices() == {out_on}
        np.testing.assert_array_equal(np.asarray(got), want)
        x = jax.device_put(jnp.zeros((2, 3, 3)), out_on)
        got = eyelike.eye_like(x, k=k)
        assert got.devices() == {out_on}
        np.testing.assert_array_equal(np.asarray(got), want)


def test_k_on_the_meta_device_is_refused_by_name() -> None:
    torch = pytest.importorskip("torch")
    k = torch.tensor([0, 1], device="meta")
    with pytest.raises(ValueError, match="k is a meta tensor"):
        eyelike.eye(3, batch_shape=2, k=k, xp=torch)
    # On the meta device too, it is the result's own.
    got = eyelike.eye(3, batch_shape=2, k=k, xp=torch, device="meta")
    assert got.is_meta
    assert tuple(got.shape) == (2, 3, 3)


# ------------------------------------------------------ out of any layout


def _layouts() -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(shape, strides in elements) of layouts whose elements are all
    distinct, nested or not."""
    return [
        ((2, 3), (3, 2)),  # offsets 0 2 4 3 5 7: the reported one
        ((2, 3), (4, 3)),
        ((3, 2), (1, 4)),
        ((2, 2, 2), (5, 2, 1)),
        ((2, 3), (3, 1)),  # contiguous
        ((2, 3), (1, 2)),  # column-major
        ((2, 3), (-3, 1)),  # reversed rows
    ]


def _distinct(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    offsets = [
        sum(i * s for i, s in zip(index, strides, strict=True))
        for index in itertools.product(*(range(n) for n in shape))
    ]
    return len(set(offsets)) == len(offsets)


@pytest.mark.parametrize(("shape", "strides"), _layouts())
@pytest.mark.parametrize("k", [0, 1, -1])
def test_out_of_every_layout_numpy(
    shape: tuple[int, ...], strides: tuple[int, ...], k: int
) -> None:
    """An out whose elements are distinct is filled, whatever its strides
    (the sort of strides refused some, saying that elements share memory)."""
    assert _distinct(shape, strides)
    span = sum((n - 1) * abs(s) for n, s in zip(shape, strides, strict=True)) + 1
    base = np.full(2 * span, 7.0)
    start = sum((n - 1) * -s for n, s in zip(shape, strides, strict=True) if s < 0)
    out = as_strided(base[start:], shape, tuple(s * 8 for s in strides))
    assert (
        eyelike.eye(shape[-2], shape[-1], batch_shape=shape[:-2], k=k, out=out) is out
    )
    np.testing.assert_array_equal(
        out, reference(shape[-2], shape[-1], k, shape[:-2], "float64")
    )


@pytest.mark.parametrize(("shape", "strides"), [s for s in _layouts() if min(s[1]) > 0])
def test_out_of_every_layout_torch(
    shape: tuple[int, ...], strides: tuple[int, ...]
) -> None:
    torch = pytest.importorskip("torch")
    out = torch.full((64,), 7.0).as_strided(shape, strides)
    eyelike.eye(shape[-2], shape[-1], batch_shape=shape[:-2], k=1, out=out)
    np.testing.assert_array_equal(
        out.numpy(), reference(shape[-2], shape[-1], 1, shape[:-2], "float32")
    )


@pytest.mark.parametrize(
    ("shape", "strides"), [((2, 3), (1, 1)), ((2, 2, 2), (2, 1, 1)), ((3, 3), (0, 1))]
)
def test_out_whose_elements_share_memory_is_refused_untouched(
    shape: tuple[int, ...], strides: tuple[int, ...]
) -> None:
    assert not _distinct(shape, strides)
    base = np.full(32, 7.0)
    out = as_strided(base, shape, tuple(s * 8 for s in strides))
    with pytest.raises(ValueError, match="share memory"):
        eyelike.eye(shape[-2], shape[-1], batch_shape=shape[:-2], out=out)
    assert (base == 7).all()


def test_out_too_large_to_check_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """A layout whose strides do not nest, with more elements than are
    listed, is refused with what is true: it could not be checked."""
    from eyelike._validate import out as _out

    monkeypatch.setattr(_out, "_ENUMERATED", 4)
    base = np.full(16, 7.0)
    out = as_strided(base, (2, 3), (24, 16))
    with pytest.raises(ValueError, match="not one eyelike can check"):
        eyelike.eye(2, 3, out=out)
    assert (base == 7).all()


def test_k_on_one_device_for_a_sharded_result_jax() -> None:
    """A sharded result reads k on every device of its mesh: k is
    replicated there, whichever device (or sharding) it came on."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    devices = jax.devices()
    if len(devices) < 2:
        pytest.skip("needs two JAX devices (XLA_FLAGS in conftest.py)")
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    sharding = NamedSharding(Mesh(np.array(devices[:2]), ("b",)), PartitionSpec("b"))
    x = jax.device_put(jnp.zeros((4, 3, 3)), sharding)
    host = [0, 1, -1, 2]
    want = reference(3, 3, host, (4,), "float32")
    for k in (
        jax.device_put(jnp.asarray(host), devices[1]),
        jax.device_put(jnp.asarray(host), sharding),
        host,
    ):
        got = eyelike.eye_like(x, k=k)
        assert got.sharding == sharding
        np.testing.assert_array_equal(np.asarray(got), want)
        got = eyelike.eye(3, batch_shape=4, k=k, xp=jnp, device=sharding)
        assert got.sharding == sharding
        np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_rank_limit_with_a_per_matrix_k_in_every_torch_out_layout(layout: str) -> None:
    """The eye, in an out of each layout."""
    torch = pytest.importorskip("torch")
    shape = (*RANK_LIMIT_BATCH, 2, 2)
    if layout == "C":
        out = torch.full(shape, 7.0)
    elif layout == "F":
        out = torch.full(shape[::-1], 7.0).permute(*range(len(shape) - 1, -1, -1))
    else:
        out = torch.full((*RANK_LIMIT_BATCH, 2, 4), 7.0)[..., ::2]
    k = torch.tensor([0, 1])
    assert eyelike.eye(2, batch_shape=RANK_LIMIT_BATCH, k=k, out=out) is out
    np.testing.assert_array_equal(
        out.numpy(), reference(2, 2, [0, 1], RANK_LIMIT_BATCH, "float32")
    )


# ------------------------------------------- k's array clamp, every type

_INTEGER_NAMES = tuple(d for d in STANDARD_DTYPES if "int" in d)
# (rows, cols, repeats of the offsets, dtype): the small mask; the large
# builds (torch's writes by index, NumPy's indices); NumPy's table of 8x8
# int8 matrices, a batch of many.
_CLAMP_SHAPES = [(3, 4, 1, "float32"), (90, 90, 1, "float32"), (8, 8, 50, "int8")]


def _integer_dtypes(xp: Any) -> list[tuple[str, Any]]:
    """Each integer dtype ``xp`` has here (JAX's 64-bit ones with x64 only)."""
    info = getattr(xp, "__array_namespace_info__", None)
    if info is not None:
        have = info().dtypes(kind="integral")
        return [(n, have[n]) for n in _INTEGER_NAMES if n in have]
    return [(n, getattr(xp, n)) for n in _INTEGER_NAMES if hasattr(xp, n)]


def _extremes(name: str) -> list[int]:
    """Offsets of integer type ``name`` at and near its ends, and small ones."""
    info = np.iinfo(name)
    near = [info.min, info.min + 1, info.max - 1, info.max, 0, 1, 2]
    return near + ([-1, -2] if info.min else [])


@pytest.mark.parametrize(("n_rows", "n_cols", "repeats", "dtype"), _CLAMP_SHAPES)
def test_array_k_of_every_integer_type_at_its_ends(
    xp: Any, n_rows: int, n_cols: int, repeats: int, dtype: str
) -> None:
    """A per-matrix ``k`` of each integer type, at its extremes, on every
    path of every namespace (a fresh eye, by the short path where it takes
    one, ``eye_like``, an ``out``): clamped, never wrapped into a diagonal.
    (The array clamp had five homes, one of which wrapped under
    ``jax.export``.)"""
    for name, dt in _integer_dtypes(xp):
        values = _extremes(name) * repeats
        k = xp.asarray(values, dtype=dt)
        batch = (len(values),)
        want = reference(n_rows, n_cols, values, batch, dtype)
        got = eyelike.eye(n_rows, n_cols, batch_shape=batch, k=k, xp=xp, dtype=dtype)
        np.testing.assert_array_equal(to_numpy(got), want, err_msg=name)
        x = xp.zeros((*batch, n_rows, n_cols), dtype=getattr(xp, dtype))
        got = eyelike.eye_like(x, k=k)
        np.testing.assert_array_equal(to_numpy(got), want, err_msg=name)
        if hasattr(type(x), "__setitem__") and xp.__name__ != "jax.numpy":
            eyelike.eye_like(x, k=k, out=x)
            np.testing.assert_array_equal(to_numpy(x), want, err_msg=name)
        # The same offsets as host values: a NumPy array and a list.
        for host in (np.asarray(values, dtype=name), values):
            got = eyelike.eye_like(x, k=host)
            np.testing.assert_array_equal(to_numpy(got), want, err_msg=name)


@pytest.mark.parametrize("name", _INTEGER_NAMES)
def test_array_k_of_every_integer_type_at_its_ends_dask(name: str) -> None:
    da = _lazy(np)
    values = _extremes(name)
    k = da.from_array(np.asarray(values, dtype=name), chunks=3)
    batch = (len(values),)
    got = eyelike.eye(4, 3, batch_shape=batch, k=k, xp=da, chunks=2)
    np.testing.assert_array_equal(
        got.compute(), reference(4, 3, values, batch, "float64")
    )
