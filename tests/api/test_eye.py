"""``eye`` and ``eye_like`` on every installed namespace, against the rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import backend_name, dtype_names, reference, to_numpy

import eyelike

BIG = [2**31 - 1, 2**31, 2**32 + 1, 2**63 - 1, 2**63, 2**64, 10**30]
OFFSETS = [0, 1, -1, 2, -2, 3, -3, 4, -4, *BIG, *(-b for b in BIG)]


def _check(result: Any, xp: Any, shape: tuple[int, ...], expected: Any) -> None:
    assert tuple(result.shape) == shape
    got = to_numpy(result)
    np.testing.assert_array_equal(got.astype(np.complex128), expected.astype(float))


@pytest.mark.parametrize("k", OFFSETS)
@pytest.mark.parametrize(("n_rows", "n_cols"), [(3, 4), (4, 3), (3, 3), (1, 5)])
def test_matches_rule_for_any_k(xp: Any, n_rows: int, n_cols: int, k: int) -> None:
    result = eyelike.eye(n_rows, n_cols, k=k, xp=xp, dtype="float32")
    _check(result, xp, (n_rows, n_cols), reference((), n_rows, n_cols, k))


@pytest.mark.parametrize("k", [-2, 0, 1, 5])
def test_matches_numpy_eye(xp: Any, k: int) -> None:
    result = eyelike.eye(4, 6, k=k, xp=xp, dtype="float32")
    np.testing.assert_array_equal(to_numpy(result), np.eye(4, 6, k=k))


@pytest.mark.parametrize(
    "shape", [(0, 0), (0, 3), (3, 0), (1, 1), (2, 0, 3), (0, 2, 2), (3, 2, 1, 4)]
)
def test_shapes_with_zero_and_one(xp: Any, shape: tuple[int, ...]) -> None:
    result = eyelike.eye(shape[-2], shape[-1], batch_shape=shape[:-2], xp=xp)
    _check(result, xp, shape, reference(shape[:-2], shape[-2], shape[-1], 0))


def test_every_dtype(xp: Any) -> None:
    for name in dtype_names(xp):
        result = eyelike.eye(3, 4, k=1, batch_shape=(2,), dtype=name, xp=xp)
        assert str(result.dtype).rsplit(".", 1)[-1] == name, name
        _check(result, xp, (2, 3, 4), reference((2,), 3, 4, 1))


def test_default_dtype_is_default_float(xp: Any) -> None:
    info = getattr(xp, "__array_namespace_info__", None)
    if info is None:  # plain numpy module before 2.0 / torch: via compat
        import array_api_compat

        info = array_api_compat.array_namespace(xp.zeros(1)).__array_namespace_info__
    expected = info().default_dtypes()["real floating"]
    assert eyelike.eye(2, xp=xp).dtype == expected


def test_batch_and_square_default(xp: Any) -> None:
    result = eyelike.eye(3, k=-1, batch_shape=(2, 3), xp=xp)
    _check(result, xp, (2, 3, 3, 3), reference((2, 3), 3, 3, -1))


@pytest.mark.parametrize(
    "k",
    [
        [0, 1, -1],
        [[0], [2]],
        [2**63, -(2**63)],
        [10**40, 1],
        np.array([1, -1], dtype=np.int8),
        np.array([2**64 - 1, 1], dtype=np.uint64),
        np.array([2**63, 0], dtype=np.uint64),
        np.array(1),
    ],
    ids=repr,
)
def test_per_matrix_k(xp: Any, k: Any) -> None:
    batch = (2, 3) if np.shape(k) in {(3,), (2, 1)} else (3, 2)
    if np.shape(k) == (2,):
        batch = (3, 2)
    result = eyelike.eye(3, 4, k=k, batch_shape=batch, xp=xp, dtype="int32")
    _check(result, xp, (*batch, 3, 4), reference(batch, 3, 4, np.asarray(k).tolist()))


def test_per_matrix_k_in_target_namespace(xp: Any) -> None:
    k = xp.asarray([3, 0, -1, -9])
    result = eyelike.eye(2, 3, k=k, batch_shape=4, xp=xp, dtype="int8")
    _check(result, xp, (4, 2, 3), reference((4,), 2, 3, [3, 0, -1, -9]))


def test_result_is_fresh_and_writeable(xp: Any) -> None:
    if backend_name(xp) == "jax":
        pytest.skip("JAX arrays are immutable by design")
    result = eyelike.eye(3, batch_shape=(2,), xp=xp, dtype="bool")
    result[0, 0, 1] = True  # a broadcast view would change the other matrix too
    got = to_numpy(result)
    assert got[0, 0, 1]
    assert not got[1, 0, 1]
    if backend_name(xp) == "numpy":
        assert result.flags.c_contiguous
        assert result.flags.writeable
        assert result.flags.owndata


def test_out_is_filled_in_place(xp: Any) -> None:
    if backend_name(xp) == "jax":
        pytest.skip("JAX arrays are immutable: tested in test_bad_input")
    out = xp.full((2, 3, 4), 7, dtype=xp.int16)
    result = eyelike.eye(3, 4, k=[1, -1], batch_shape=2, out=out)
    assert result is out
    _check(out, xp, (2, 3, 4), reference((2,), 3, 4, [1, -1]))
    eyelike.eye(3, 4, k=2, batch_shape=2, out=out)
    _check(out, xp, (2, 3, 4), reference((2,), 3, 4, 2))


def test_out_non_contiguous_numpy() -> None:
    base = np.full((4, 6, 8), 5.0)
    out = base[::2, ::2, 1::2]
    eyelike.eye(3, 4, k=1, batch_shape=2, out=out)
    np.testing.assert_array_equal(out, reference((2,), 3, 4, 1))
    # Everything outside the view is untouched.
    mask = np.ones(base.shape, bool)
    mask[::2, ::2, 1::2] = False
    assert (base[mask] == 5).all()
    eyelike.eye(3, 4, k=[0, -2], batch_shape=2, out=out)
    np.testing.assert_array_equal(out, reference((2,), 3, 4, [0, -2]))
    assert (base[mask] == 5).all()


def test_eye_like_keeps_namespace_dtype_shape(xp: Any) -> None:
    x = xp.zeros((2, 3, 4), dtype=xp.int16)
    result = eyelike.eye_like(x, k=1)
    assert type(result) is type(x)
    assert result.dtype == x.dtype
    _check(result, xp, (2, 3, 4), reference((2,), 3, 4, 1))
    result = eyelike.eye_like(x, dtype="float32", k=[0, 5])
    assert str(result.dtype).endswith("float32")
    _check(result, xp, (2, 3, 4), reference((2,), 3, 4, [0, 5]))


def test_eye_like_device(xp: Any) -> None:
    import array_api_compat

    if backend_name(xp) == "array_api_strict":
        x = xp.zeros((2, 2), device=xp.Device("device1"))
    else:
        x = xp.zeros((2, 2))
    result = eyelike.eye_like(x)
    assert array_api_compat.device(result) == array_api_compat.device(x)


def test_eye_device_argument_array_api_strict() -> None:
    s = pytest.importorskip("array_api_strict")
    dev = s.Device("device2")
    result = eyelike.eye(2, 3, xp=s, device=dev, k=[1, 0], batch_shape=2)
    assert result.device == dev
    # A device without 64-bit integers still gets exact results for huge k.
    dev = _strict_device(s, "no_x64")
    result = eyelike.eye(2, xp=s, device=dev, k=[2**63, -1], batch_shape=2)
    _check(result, s, (2, 2, 2), reference((2,), 2, 2, [2**63, -1]))


def test_jax_under_jit(jax_jit: Any) -> None:
    jnp = pytest.importorskip("jax.numpy")
    f = jax_jit(lambda x: eyelike.eye_like(x, k=1))
    _check(f(jnp.zeros((2, 3, 4))), jnp, (2, 3, 4), reference((2,), 3, 4, 1))
    g = jax_jit(lambda x, k: eyelike.eye_like(x, k=k))
    got = g(jnp.zeros((2, 3, 4)), jnp.asarray([1, -2]))
    _check(got, jnp, (2, 3, 4), reference((2,), 3, 4, [1, -2]))


def test_numpy_ml_dtypes_and_index_objects() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    result = eyelike.eye(np.int64(3), np.uint8(2), dtype=ml_dtypes.bfloat16)
    assert result.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(result.astype(np.float32), np.eye(3, 2))
    for name in ("float8_e4m3fn", "float8_e5m2", "int4", "float4_e2m1fn"):
        result = eyelike.eye(3, dtype=name, batch_shape=np.array([2]))
        np.testing.assert_array_equal(result.astype(np.float32), [np.eye(3)] * 2)


def test_numpy_dtype_forms() -> None:
    for dtype in (np.float32, np.dtype("float32"), "float32", "f4"):
        assert eyelike.eye(2, dtype=dtype).dtype == np.float32


def test_torch_dtype_forms() -> None:
    torch = pytest.importorskip("torch")
    for dtype in (torch.int32, np.int32, np.dtype("int32"), "int32"):
        assert eyelike.eye(2, dtype=dtype, xp=torch).dtype == torch.int32


def test_out_sets_the_defaults(xp: Any) -> None:
    # With out=, dtype (and device) default to out's, for eye_like too.
    if backend_name(xp) == "jax":
        pytest.skip("JAX arrays are immutable")
    x = xp.zeros((2, 3, 4), dtype=xp.float32)
    out = xp.ones((2, 3, 4), dtype=xp.int16)
    assert eyelike.eye_like(x, k=1, out=out) is out
    _check(out, xp, (2, 3, 4), reference((2,), 3, 4, 1))


def _strict_device(s: Any, name: str) -> Any:
    """array-api-strict's device ``name``; a skip where its release has none
    of that name (``no_x64`` is newer than array-api-strict 2.3)."""
    try:
        return s.Device(name)
    except ValueError:
        pytest.skip(f"array-api-strict {s.__version__} has no device {name!r}")


def test_out_on_a_non_default_device_array_api_strict() -> None:
    s = pytest.importorskip("array_api_strict")
    for name in ("device1", "no_x64"):
        out = s.zeros((2, 3, 4), dtype=s.float32, device=_strict_device(s, name))
        eyelike.eye(3, 4, k=[1, -(2**63)], batch_shape=2, out=out)
        _check(out, s, (2, 3, 4), reference((2,), 3, 4, [1, -(2**63)]))


def test_zero_d_k_is_one_offset_for_all() -> None:
    np.testing.assert_array_equal(eyelike.eye(3, k=np.array(1)), np.eye(3, k=1))
    got = eyelike.eye_like(np.zeros((2, 3, 3)), k=np.array(0, dtype=np.uint8))
    np.testing.assert_array_equal(got, reference((2,), 3, 3, 0))
    got = eyelike.eye(3, k=np.array(2**63, dtype=np.uint64), batch_shape=2)
    assert not got.any()


def test_torch_unsigned_k() -> None:
    torch = pytest.importorskip("torch")
    for dt in (torch.uint16, torch.uint32, torch.uint64):
        k = torch.tensor([2, 1], dtype=dt)
        got = eyelike.eye(3, 4, k=k, batch_shape=2, xp=torch, dtype="int8")
        _check(got, torch, (2, 3, 4), reference((2,), 3, 4, [2, 1]))
    k = torch.tensor([2**63, 1], dtype=torch.uint64)
    got = eyelike.eye(3, 4, k=k, batch_shape=2, xp=torch, dtype="int8")
    _check(got, torch, (2, 3, 4), reference((2,), 3, 4, [2**63, 1]))


def test_empty_output_needs_no_scratch() -> None:
    s = pytest.importorskip("array_api_strict")
    got = eyelike.eye(2**40, 0, xp=s)
    assert got.shape == (2**40, 0)
    got = eyelike.eye(20000, 20000, batch_shape=(0,), xp=s, dtype="int8")
    assert got.shape == (0, 20000, 20000)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("k", [1, [0, -1, 2]])
def test_order_as_numpy_eye_takes_it(order: str, k: Any) -> None:
    """Bug: order= (NumPy's and CuPy's eye take it) was a TypeError
    "unexpected keyword argument". The layout is the one asked for, the
    values those of the rule; Dask's chunks take it too."""
    got = eyelike.eye(3, 4, k=k, batch_shape=3, dtype="int16", order=order)
    assert got.flags.c_contiguous == (order == "C")
    assert got.flags.f_contiguous == (order == "F")
    np.testing.assert_array_equal(got, reference((3,), 3, 4, k))
    if order == "F":
        np.testing.assert_array_equal(
            np.eye(5, 2, 1, order="F"), eyelike.eye(5, 2, k=1, order="F")
        )
        assert eyelike.eye(5, 2, k=1, order="F").flags.f_contiguous
    da = pytest.importorskip("dask.array")
    lazy = eyelike.eye(3, 4, k=k, batch_shape=3, xp=da, chunks=1, order=order)
    block = lazy.to_delayed().ravel()[1].compute()
    assert block.flags.f_contiguous == (order == "F")
    np.testing.assert_array_equal(lazy.compute(), reference((3,), 3, 4, k))


@pytest.mark.parametrize("library", ["torch", "jax.numpy", "array_api_strict"])
def test_order_refused_where_there_is_no_memory_order(library: str) -> None:
    xp = pytest.importorskip(library)
    for order in ("C", "F"):
        with pytest.raises(
            TypeError, match=r"order is for namespaces with a memory order"
        ):
            eyelike.eye(2, xp=xp, order=order)


@pytest.mark.parametrize("order", ["A", "K", "c", "f", 1, None.__class__, b"C"])
def test_order_values_other_than_c_and_f(order: Any) -> None:
    with pytest.raises(ValueError, match=r"order must be 'C' or 'F'"):
        eyelike.eye(2, order=order)


def test_order_with_out_is_refused_and_out_untouched() -> None:
    out = np.full((2, 2), 7.0)
    with pytest.raises(
        TypeError, match="is for a fresh result; out has its own layout"
    ):
        eyelike.eye(2, out=out, order="F")
    assert (out == 7).all()


@pytest.mark.parametrize("dtype", ["bool", "uint8", "float32", "complex64", "bfloat16"])
# (Up to 4096 elements: the mask; then by table where at most 32 bytes
# wide, else by index: 40x40, 20x70 and 70x20 in a batch of 24.)
@pytest.mark.parametrize(
    ("n_rows", "n_cols"), [(1, 1), (3, 4), (8, 2), (9, 9), (40, 40), (20, 70), (70, 20)]
)
def test_per_matrix_k_by_table_and_by_index(
    dtype: str, n_rows: int, n_cols: int
) -> None:
    # Matrices at most 32 bytes wide are copied from a table of every
    # diagonal's matrix; wider ones take the ones' indices: both exact, into
    # a fresh array and a contiguous out (every element written), with
    # offsets past the matrix and k broadcast over a batch dimension.
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    ks = [[0, 1, -1, 2**40, -(2**40), n_cols - 1, 1 - n_rows, 2]] * 3
    want = reference((3, 8), n_rows, n_cols, ks)
    got = eyelike.eye(n_rows, n_cols, batch_shape=(3, 8), k=ks[0], dtype=dtype)
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(_as_float(got), want)
    out = np.full((3, 8, n_rows, n_cols), 7, dtype=got.dtype)
    assert eyelike.eye(n_rows, n_cols, batch_shape=(3, 8), k=ks[0], out=out) is out
    np.testing.assert_array_equal(_as_float(out), want)


def _as_float(a: Any) -> Any:
    return (a.real if a.dtype.kind == "c" else a).astype(np.float32)


@pytest.mark.parametrize("k", [1, [0, -1]])
def test_eye_like_keeps_a_numpy_subclass_as_zeros_like(tmp_path: Any, k: Any) -> None:
    """Bug (issue 37): ``eye_like`` of an ndarray subclass returned a plain
    ndarray, where ``np.zeros_like`` keeps the subclass."""

    class Mine(np.ndarray):  # type: ignore[type-arg]
        pass

    memmap = np.memmap(tmp_path / "m", dtype=np.float32, mode="w+", shape=(2, 3, 3))
    for x in (np.ma.zeros((2, 3, 3)), memmap, np.zeros((2, 3, 3)).view(Mine)):
        got = eyelike.eye_like(x, k=k, dtype=np.int16)
        assert type(got) is type(np.zeros_like(x)) is type(x)
        assert got.dtype == np.int16
        np.testing.assert_array_equal(np.asarray(got), reference((2,), 3, 3, k))
    masked = eyelike.eye_like(np.ma.zeros((2, 3, 3)), k=k)
    assert not np.ma.getmaskarray(masked).any()
    # As documented (a review asked): x's mask is part of its values, not
    # kept; its fill_value is. An out keeps its own mask, its data filled.
    mask = np.broadcast_to(np.eye(3, dtype=bool), (2, 3, 3))
    x = np.ma.masked_array(np.zeros((2, 3, 3)), mask=mask)
    x.fill_value = -5
    masked = eyelike.eye_like(x, k=k)
    assert not np.ma.getmaskarray(masked).any()
    assert masked.fill_value == -5
    assert eyelike.eye(3, batch_shape=2, k=k, out=x) is x
    np.testing.assert_array_equal(
        np.ma.getmaskarray(x), np.eye(3) > np.zeros((2, 3, 3))
    )
    np.testing.assert_array_equal(x.data, reference((2,), 3, 3, k))


@pytest.mark.parametrize("n", [3, 40])  # the mask, and the builds by index
def test_a_numpy_subclass_k_is_read_as_its_values(xp: Any, n: int) -> None:
    """Bug (review): a MaskedArray ``k`` reached NumPy's build as itself: the
    result was a MaskedArray (the mask carried over) on NumPy only. Its
    values are read, on every namespace, as torch read them; one with an
    entry masked, which holds no value there, is refused naming ``k`` (it
    was read through its mask, the hidden value used)."""
    k = np.ma.array([1, 2], mask=[False, False])
    got = eyelike.eye(n, batch_shape=2, k=k, xp=xp)
    assert type(to_numpy(got)) is np.ndarray
    if xp is np:
        assert type(got) is np.ndarray
    np.testing.assert_array_equal(to_numpy(got), reference((2,), n, n, [1, 2]))
    k.mask = [False, True]
    with pytest.raises(TypeError, match=r"k must .*, not a masked value"):
        eyelike.eye(n, batch_shape=2, k=k, xp=xp)


def test_a_numpy_scalar_dtype_is_read_as_its_dtype(xp: Any) -> None:
    """Regression (a review of this round's dtype_name, which read only
    NumPy's dtypes and types by NumPy's parser): a NumPy scalar given as
    the dtype (``np.float32(1.0)``, whose dtype NumPy's parser reads) was
    refused on torch, JAX and array-api-strict, and taken on NumPy."""
    made = eyelike.eye(2, dtype=np.float32(1.0), xp=xp)
    assert str(made.dtype).rsplit(".", 1)[-1] == "float32"


def test_a_batch_shape_array_past_62_entries_is_refused_by_name(xp: Any) -> None:
    """Bug (a review; for openvino.eye, a regression of this round, which
    reads its array batch_shape by eye's rule): an array of more than 62
    entries without tolist (array-api-strict's) met len(), a raw TypeError,
    where the rank limit is a ValueError naming batch_shape."""
    dims = xp.asarray([1] * 63, dtype=xp.int32)
    with pytest.raises(ValueError, match="batch_shape has 63 dimensions"):
        eyelike.eye(1, batch_shape=dims, xp=xp)
    with pytest.raises(ValueError, match="batch_shape has 63 dimensions"):
        eyelike.openvino.eye(1, 1, 0, dims, output_type="f32")
