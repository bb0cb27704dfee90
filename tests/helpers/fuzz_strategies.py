"""What the fuzz tests feed eyelike: hostile objects, hypothesis strategies
for arbitrary Python objects and for plausible values of each parameter, the
fixed list of edge values, and the example budget.

Arbitrary objects: ints of any size, floats (NaN, inf, -0.0), bools and
``np.bool_``, strings, bytes, None, nested and ragged lists and tuples,
dicts, NumPy arrays of every dtype kind and rank (0-D too), NumPy scalars of
every type, objects with ``__index__`` (returning an int, a huge int, or
raising), ml_dtypes types and arrays, PyTorch tensors, JAX and
array-api-strict arrays, modules and dtype objects of every namespace.
"""

from __future__ import annotations

import math
import operator
import os
import warnings
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .fuzz_namespaces import (
    INT64_MAX,
    INT64_MIN,
    STANDARD,
    da,
    jnp,
    ml_dtypes,
    to_torch,
    torch,
    xs,
)

# CI runs each fuzzer's default number of examples (all the fuzz tests in
# about 25 s); the long run (``nox -s fuzz``) scales every one of them up,
# in the files the noxfile's FUZZ_FILES lists:
#     EYELIKE_FUZZ_EXAMPLES=20000 pytest tests/*/test_fuzz_*.py \
#         tests/api/test_short_path.py
EXAMPLES = int(os.environ.get("EYELIKE_FUZZ_EXAMPLES", "0") or 0)


def fuzz(default: int) -> settings:
    """``default`` examples in CI; ``EYELIKE_FUZZ_EXAMPLES`` for long runs."""
    return settings(
        max_examples=EXAMPLES or default,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )


# --------------------------------------------------------- hostile objects


class Boom(Exception):
    """The caller's own error, from the caller's own ``__index__``."""


class Index:
    """Not an int, but has ``__index__`` (like NumPy integer scalars)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"Index({self.value})"


class BadIndex:
    """``__index__`` raises ``TypeError``: not an integer after all."""

    def __index__(self) -> int:
        msg = "BadIndex is not an integer"
        raise TypeError(msg)

    def __repr__(self) -> str:
        return "BadIndex()"


class BoomIndex:
    """``__index__`` raises the caller's own exception."""

    def __index__(self) -> int:
        msg = "raised by the caller's own __index__"
        raise Boom(msg)

    def __repr__(self) -> str:
        return "BoomIndex()"


# -------------------------------------------------------------- strategies

EDGE_INTS = [
    *range(-3, 8),
    2**31 - 1,
    2**31,
    2**32,
    2**53 + 1,
    INT64_MAX,
    2**63,
    INT64_MIN,
    INT64_MIN - 1,
    2**64,
    2**64 + 1,
    10**40,
    -(10**40),
]
ints = st.one_of(
    st.integers(-8, 8),
    st.sampled_from(EDGE_INTS),
    st.integers(),
    st.integers(min_value=INT64_MAX - 2),  # at and past the int64 edges
    st.integers(max_value=INT64_MIN + 2),
)
floats = st.floats() | st.sampled_from(
    [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, 2.0, 0.5]
)

np_dtypes = st.one_of(
    hnp.scalar_dtypes(),
    hnp.integer_dtypes(endianness="?"),
    hnp.unsigned_integer_dtypes(endianness="?"),
    hnp.floating_dtypes(endianness="?"),
    hnp.complex_number_dtypes(endianness="?"),
    hnp.byte_string_dtypes(max_len=3),
    hnp.unicode_string_dtypes(max_len=3),
    hnp.datetime64_dtypes(),
    hnp.timedelta64_dtypes(),
    hnp.array_dtypes(allow_subarrays=True, max_size=2),
    st.sampled_from([np.dtype("V4"), np.dtype(bool), np.dtype("longdouble")]),
)
small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)


def _arrays_of(dt: np.dtype[Any]) -> st.SearchStrategy[np.ndarray[Any, Any]]:
    if dt.kind == "V" and dt.fields is None:  # raw bytes: no element strategy
        return small_shapes.map(lambda shape: np.zeros(shape, dt))
    return hnp.arrays(dt, small_shapes)


np_arrays = st.one_of(
    np_dtypes.flatmap(_arrays_of),
    st.lists(ints, max_size=4).map(lambda v: np.array(v, dtype=object)),
)
np_scalars = np_dtypes.flatmap(
    lambda dt: _arrays_of(dt).map(lambda a: np.zeros((), dt) if a.ndim else a)
).map(lambda a: a[()])

ML_TYPES: list[Any] = (
    [
        getattr(ml_dtypes, name)
        for name in sorted(dir(ml_dtypes))
        if isinstance(getattr(ml_dtypes, name), type) and name not in ("finfo", "iinfo")
    ]
    if ml_dtypes is not None
    else []
)


def _held(t: Any) -> list[float]:
    """The values of -2..3 that type ``t`` holds exactly: a cast of anything
    else is the cast's business (a warning, a NaN, a wrapped sub-byte int),
    not what these tests are about."""
    held = []
    for v in range(-2, 4):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                back = np.array(v, np.float32).astype(t).astype(np.complex128)
                exact = bool(back == v)
            except (TypeError, ValueError, OverflowError, RuntimeWarning):
                exact = False
        if exact:
            held.append(float(v))
    return held


ml_values: st.SearchStrategy[Any] = st.nothing()
if ML_TYPES:
    ml_values = st.sampled_from(ML_TYPES) | st.sampled_from(ML_TYPES).flatmap(
        lambda t: hnp.arrays(
            np.float32, small_shapes, elements=st.sampled_from(_held(t))
        ).map(lambda a: a.astype(t))
    )

TORCH_OK = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16"]
TORCH_OK += ["float32", "float64", "complex64", "uint16", "uint32", "uint64"]


def _numeric_arrays(names: list[str]) -> st.SearchStrategy[np.ndarray[Any, Any]]:
    return st.sampled_from(names).flatmap(
        lambda n: hnp.arrays(
            np.dtype(n),
            small_shapes,
            elements=hnp.from_dtype(np.dtype(n)).filter(lambda v: v == v)
            if np.dtype(n).kind in "fc"
            else None,
        )
    )


def sharded(a: Any, along_first: bool = False) -> Any:
    """``a`` as a JAX array laid over every device by a NamedSharding:
    replicated, or split along its first axis where it divides evenly."""
    import jax

    devices = jax.devices()
    mesh = jax.sharding.Mesh(np.array(devices), ("all",))
    split = along_first and a.ndim > 0 and a.shape[0] % len(devices) == 0
    spec = jax.sharding.PartitionSpec("all") if split else jax.sharding.PartitionSpec()
    return jax.device_put(jnp.asarray(a), jax.sharding.NamedSharding(mesh, spec))


def _replicated(a: np.ndarray[Any, Any]) -> Any:
    return sharded(a)


def _unknown_sizes(a: np.ndarray[Any, Any]) -> Any:
    lazy = da.from_array(a.reshape(-1), chunks=2)
    return lazy[lazy == lazy] if a.size else lazy[lazy > 0]


other_arrays: st.SearchStrategy[Any] = st.nothing()
if torch is not None:
    other_arrays |= _numeric_arrays(TORCH_OK).map(to_torch)
    other_arrays |= st.sampled_from(
        [
            torch.tensor(3),
            torch.tensor([3]),
            torch.tensor(True),
            torch.tensor(2.0),
            torch.ones((2, 2), dtype=torch.bfloat16),
            torch.tensor(1.0).bfloat16(),
        ]
    )
if xs is not None:
    other_arrays |= _numeric_arrays(["bool", "int8", "int64", "uint64", "float32"]).map(
        xs.asarray
    )
if jnp is not None:
    other_arrays |= _numeric_arrays(["bool", "int32", "uint8", "float32"]).map(
        jnp.asarray
    )
    # Arrays laid over every device by a NamedSharding (two CPU devices in
    # the test run: see conftest), as jax.sharding users hold them.
    other_arrays |= _numeric_arrays(["int32", "float32"]).map(_replicated)
if da is not None:
    # Lazy arrays whose chunk sizes Dask no longer knows (nan dimensions).
    other_arrays |= _numeric_arrays(["int64", "float64"]).map(_unknown_sizes)

index_objects = st.one_of(ints.map(Index), st.just(BadIndex()), st.just(BoomIndex()))
MODULES = [m for m in (np, torch, jnp, xs, da, np.linalg, math, operator) if m]
DTYPE_OBJECTS: list[Any] = [np.float32, np.int8, np.bool_, np.str_, object, float]
DTYPE_OBJECTS += [np.dtype(">f8"), np.dtype("<i2"), np.dtype("M8[s]")]
if torch is not None:
    DTYPE_OBJECTS += [torch.float32, torch.bfloat16, torch.uint64, torch.complex32]
    DTYPE_OBJECTS += [torch.float8_e8m0fnu, torch.device("cpu")]
if xs is not None:
    DTYPE_OBJECTS += [xs.float64, xs.int8, xs.bool]
if jnp is not None:
    DTYPE_OBJECTS += [jnp.bfloat16, jnp.int32]

leaves = st.one_of(
    ints,
    floats,
    st.booleans(),
    st.sampled_from([np.True_, np.False_]),
    st.none(),
    st.text(max_size=6),
    st.binary(max_size=4),
    np_arrays,
    np_scalars,
    index_objects,
    ml_values,
    other_arrays,
    st.sampled_from(MODULES),
    st.sampled_from(DTYPE_OBJECTS),
)
anything = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=2), inner, max_size=2),
    ),
    max_leaves=5,
)


def _fits_int64(v: int) -> bool:
    return INT64_MIN <= v <= INT64_MAX


def _devices() -> list[Any]:
    devices: list[Any] = ["cpu"]
    if torch is not None:
        devices += [torch.device("cpu"), torch.device("cuda"), torch.device("meta")]
    if xs is not None:
        devices += list(xs.__array_namespace_info__().devices())
    if jnp is not None:
        import jax

        devices += jax.devices()
    return devices


def hostile(param: str) -> st.SearchStrategy[Any]:
    """Values for one parameter of ``eye``/``eye_like``: hostile objects and
    plausible ones."""
    plausible: dict[str, st.SearchStrategy[Any]] = {
        "n_rows": ints | index_objects,
        "n_cols": ints | index_objects | st.none(),
        "k": ints
        | st.lists(ints, max_size=4)
        | st.lists(st.lists(ints, max_size=2), max_size=2)
        | hnp.arrays(np.int64, small_shapes, elements=ints.filter(_fits_int64)),
        "batch_shape": st.lists(ints, max_size=3) | ints | st.just(()),
        "dtype": st.sampled_from([*STANDARD, "float16", "bfloat16", "foo", "a3"])
        | st.sampled_from(["float8_e8m0fnu", "int1", "int4", "float4_e2m1fn"])
        | st.sampled_from(DTYPE_OBJECTS + ML_TYPES)
        | st.text(alphabet="fiucb?<>=248,()[]", max_size=5),
        "device": st.sampled_from(["cpu", "cuda", "meta", "", "CPU", 0, None, -1])
        | st.sampled_from(_devices()),
        "xp": st.sampled_from(MODULES) | st.just("numpy"),
    }
    return anything | plausible[param]


@st.composite
def outs(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    """An ``out`` for ``shape``: often right, often subtly or wildly wrong."""
    how = draw(
        st.sampled_from(
            ["anything", "numpy", "view", "read-only", "broadcast", "other", "wrong"]
        )
    )
    dt = draw(np_dtypes | st.sampled_from([np.dtype(t) for t in ML_TYPES]))
    if how == "anything":
        return draw(anything)
    if how == "wrong":
        return draw(np_arrays | other_arrays)
    if how == "other":
        names = ["bool", "int8", "int32", "float32", "float64", "uint8"]
        name = draw(st.sampled_from(names))
        base = np.full(shape, 7, dtype=name) if name != "bool" else np.ones(shape, bool)
        maker = draw(
            st.sampled_from(
                [m for m in (to_torch, xs and xs.asarray, jnp and jnp.asarray) if m]
            )
        )
        return maker(base)
    if (
        (dt.kind == "V" and dt.fields is None)
        or dt.hasobject
        or dt.type.__module__ == "ml_dtypes"
    ):
        base = np.zeros((2, *shape), dt)
    else:
        base = draw(hnp.arrays(dt, (2, *shape)))
    if how == "numpy":
        return base[0].copy()
    if how == "view":
        return draw(st.sampled_from([base[1], base[::-1][0], np.flip(base, -1)[0]]))
    if how == "read-only":
        a = base[0].copy()
        a.flags.writeable = False
        return a
    return np.broadcast_to(np.zeros((), dt), shape)  # read-only


# ------------------------------------------------------------- edge values


def _edge_values() -> list[Any]:
    values: list[Any] = [0, 1, -1, 2**31, INT64_MAX, 2**63, INT64_MIN, INT64_MIN - 1]
    values += [2**64, 10**40, True, np.True_, None, 1.0, math.nan, -0.0, ""]
    values += ["1", b"1", [], (), [1], [[1]], [1, [1]], {}, {1: 2}, Index(3)]
    values += [Index(2**63), Index(-1), BadIndex(), BoomIndex(), np.int8(3)]
    values += [np.uint64(2**64 - 1), np.float64(2.0), np.array(3), np.array([3])]
    values += [np.array([[3]]), np.array(2.0), np.array(True), np.array([], int)]
    values += [np.array([2, 1], np.int32), np.array(["3"]), np.float32, np, "cpu"]
    values += [[True], [2, np.False_], "float8_e8m0fnu", "int1"]
    if ml_dtypes is not None:
        values += [ml_dtypes.bfloat16, ml_dtypes.float8_e8m0fnu]
        # (int1 is newer than ml_dtypes 0.5.0, the oldest release we support.)
        int1 = getattr(ml_dtypes, "int1", None)
        values += [] if int1 is None else [int1]
    if torch is not None:
        values += [torch.tensor(3), torch.tensor([3]), torch.tensor(2.5)]
        values += [torch.tensor([3], dtype=torch.int32), torch.float32]
    if xs is not None:
        values += [xs.asarray(3), xs.asarray([3, 1])]
    return values


# Every edge value goes into every parameter of every API, deterministically.
EDGES = _edge_values()


def edge_id(v: Any) -> str:
    """A short test id for an edge value."""
    text = repr(v) if not isinstance(v, type) else v.__name__
    return text.replace("\n", " ")[:40]
