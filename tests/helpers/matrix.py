"""The conformance matrix's two tables: every argument form the docs name,
and every execution mode each namespace promises; and the refusals made on
purpose, each with its reason.

A cell is (namespace, mode, parameter, form): the base call
``eye(3, 4, batch_shape=(1, 2), k=1, dtype=<float32>, xp=<namespace>)`` (or
``eye_like`` of a (1, 2, 3, 4) array) with that one parameter given in that
form, run in that mode. It must give the eager NumPy oracle's values, dtype
and shape on the right device, or be a refusal listed in `REFUSALS`: a
TypeError or ValueError naming the parameter, with nothing written.
``docs/guide/conformance.rst`` holds the tables as rendered here
(`render`); a test keeps the two equal.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# The base call's plain values; a form replaces one of them.
ROWS, COLS, BATCH, K = 3, 4, (1, 2), 1


@dataclass(frozen=True)
class Form:
    """One way the docs let a caller spell one parameter.

    ``make(lib)`` gives the value for namespace module ``lib``; ``plain`` is
    what it means (the oracle's input): a count, a batch tuple, an offset
    (int or nested list), a dtype name, or for ``out``/``device`` None.
    ``only``: the namespaces that have this form (empty: all).
    """

    param: str
    name: str
    make: Callable[[Any], Any]
    plain: Any = None
    only: tuple[str, ...] = ()


def _int_dtypes(lib: Any) -> list[str]:
    return ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _lib_name(lib: Any) -> str:
    name = lib.__name__
    return {
        "jax.numpy": "jax",
        "dask.array": "dask",
        "marray.numpy": "marray",
        "mlx.core": "mlx",
    }.get(name, name)


def _full(lib: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """A fresh array of 7s (so that a fill that was not done shows)."""
    return lib.full(shape, 7, dtype=dtype)


def _strided_out(lib: Any, dtype: Any) -> Any:
    """A view whose elements are not contiguous: every other column."""
    base = lib.full((*BATCH, ROWS, 2 * COLS), 7, dtype=dtype)
    return base[..., ::2]


FORMS: list[Form] = [
    # counts
    Form("n_rows", "int", lambda lib: ROWS, ROWS),
    Form("n_rows", "NumPy integer", lambda lib: np.int64(ROWS), ROWS),
    Form("n_rows", "NumPy uint8", lambda lib: np.uint8(ROWS), ROWS),
    Form("n_rows", "0-d NumPy array", lambda lib: np.asarray(ROWS), ROWS),
    Form("n_rows", "0-d namespace array", lambda lib: lib.asarray(ROWS), ROWS),
    Form(
        "n_rows",
        "0-d namespace int32",
        lambda lib: lib.asarray(ROWS, dtype=lib.int32),
        ROWS,
    ),
    Form("n_rows", "zero (an empty output)", lambda lib: 0, 0),
    Form("n_cols", "NumPy int32", lambda lib: np.int32(COLS), COLS),
    # batch_shape
    Form("batch_shape", "int", lambda lib: 2, (2,)),
    Form("batch_shape", "tuple", lambda lib: (2,), (2,)),
    Form("batch_shape", "list", lambda lib: [2], (2,)),
    Form("batch_shape", "range", lambda lib: range(2, 3), (2,)),
    Form("batch_shape", "2-d tuple", lambda lib: (2, 1), (2, 1)),
    Form("batch_shape", "NumPy integer", lambda lib: np.int64(2), (2,)),
    Form("batch_shape", "1-D NumPy array", lambda lib: np.array([2]), (2,)),
    Form(
        "batch_shape",
        "1-D namespace array",
        lambda lib: lib.asarray([2]),
        (2,),
        only=("numpy", "cupy", "torch", "jax", "array_api_strict"),
    ),
    # (Of one entry, a FakeTensorMode's tensor keeps its value; of two, not.)
    Form(
        "batch_shape",
        "1-D namespace array of 2",
        lambda lib: lib.asarray([1, 2]),
        (1, 2),
        only=("numpy", "cupy", "torch", "jax", "array_api_strict"),
    ),
    Form(
        "batch_shape",
        "torch.Size",
        lambda lib: lib.Size([2]),
        (2,),
        only=("torch",),
    ),
    Form("batch_shape", "with a zero (no matrices)", lambda lib: (2, 0), (2, 0)),
    # k
    Form("k", "int", lambda lib: K, K),
    Form("k", "negative int", lambda lib: -2, -2),
    Form("k", "int past int64", lambda lib: 2**70, 2**70),
    Form("k", "NumPy integer", lambda lib: np.int64(K), K),
    Form("k", "NumPy uint8", lambda lib: np.uint8(K), K),
    Form("k", "0-d NumPy array", lambda lib: np.asarray(K), K),
    Form("k", "list", lambda lib: [0, -1], [0, -1]),
    Form("k", "tuple", lambda lib: (3, 1), [3, 1]),
    Form("k", "list past int64", lambda lib: [2**70, -(2**70)], [2**70, -(2**70)]),
    Form("k", "nested list", lambda lib: [[1, 0]], [[1, 0]]),
    Form("k", "range", lambda lib: range(-1, 1), [-1, 0]),
    Form("k", "deque", lambda lib: collections.deque([2, -1]), [2, -1]),
    *[
        Form("k", f"NumPy {dt} array", lambda lib, dt=dt: np.array([1, 0], dt), [1, 0])
        for dt in _int_dtypes(None)
    ],
    *[
        Form(
            "k",
            f"namespace {dt} array",
            lambda lib, dt=dt: lib.asarray([0, 1], dtype=getattr(lib, dt)),
            [0, 1],
        )
        # (int64: not in JAX without x64; NumPy's of every width above)
        for dt in ("int8", "int16", "int32", "uint8")
    ],
    Form("k", "0-d namespace array", lambda lib: lib.asarray(-1), -1),
    # dtype
    Form("dtype", "None", lambda lib: None, None),
    Form("dtype", "name", lambda lib: "float32", "float32"),
    Form("dtype", "int name", lambda lib: "int8", "int8"),
    Form("dtype", "bool name", lambda lib: "bool", "bool"),
    Form("dtype", "NumPy type", lambda lib: np.float32, "float32"),
    Form("dtype", "NumPy int type", lambda lib: np.int8, "int8"),
    Form("dtype", "NumPy dtype", lambda lib: np.dtype("float32"), "float32"),
    Form("dtype", "namespace dtype", lambda lib: lib.float32, "float32"),
    Form("dtype", "namespace int dtype", lambda lib: lib.uint8, "uint8"),
    # device
    Form("device", "None", lambda lib: None),
    Form("device", "the namespace's default", lambda lib: default_device(lib)),
    Form(
        "device",
        "a name",
        lambda lib: "cpu",
        only=("numpy", "torch", "jax", "dask"),
    ),
    # x (eye_like): an empty one, as the base call's x is (1, 2, 3, 4)
    Form(
        "x",
        "no rows",
        lambda lib: lib.zeros((*BATCH, 0, COLS), dtype=lib.float32),
        (*BATCH, 0, COLS),
    ),
    Form(
        "x",
        "a batch with a zero",
        lambda lib: lib.zeros((2, 0, ROWS, COLS), dtype=lib.float32),
        (2, 0, ROWS, COLS),
    ),
    # out
    Form("out", "fresh", lambda lib: _full(lib, (*BATCH, ROWS, COLS), lib.float32)),
    Form(
        "out",
        "strided view",
        lambda lib: _strided_out(lib, lib.float32),
        only=("numpy", "cupy", "torch"),
    ),
]

PARAMS = ("n_rows", "n_cols", "batch_shape", "k", "dtype", "device", "out")
# eye_like takes these; its x gives the rest.
LIKE_PARAMS = ("x", "k", "dtype", "out")


def lib_marks(name: str) -> list[Any]:
    """The marks of a cell on ``name``: CuPy's are ``gpu`` tests, which the
    GPU check runs."""
    import pytest

    return [pytest.mark.gpu] if name == "cupy" else []


def lib_params() -> list[Any]:
    import pytest

    return [pytest.param(name, id=name, marks=lib_marks(name)) for name in LIBS]


def lib_or_skip(name: str) -> Any:
    """The namespace module of ``LIBS[name]``, or a skip: not installed, or
    (CuPy) no CUDA device to compute on."""
    import pytest

    from . import GPU_REASON, HAS_GPU

    if name == "cupy" and not HAS_GPU:
        pytest.skip(GPU_REASON)
    found = pytest.importorskip(LIBS[name])
    if name == "marray":  # masked arrays over NumPy's
        import numpy

        return found.masked_namespace(numpy)
    return found


def default_device(lib: Any) -> Any:
    """The device the namespace makes arrays on when told none."""
    name = _lib_name(lib)
    if name == "torch":
        return lib.get_default_device()
    if name == "jax":
        import jax

        return jax.devices()[0]
    if name == "array_api_strict":
        return lib.Device("CPU_DEVICE")
    if name == "cupy":
        return lib.cuda.Device()
    if name in ("numpy", "dask", "cubed"):
        return "cpu"
    return lib.__array_namespace_info__().default_device()  # (the standard's)


def default_dtype(lib: Any) -> str:
    """The namespace's default floating dtype's name, now."""
    name = _lib_name(lib)
    if name == "torch":
        return str(lib.get_default_dtype()).rsplit(".", 1)[-1]
    if name == "jax":
        import jax

        return "float64" if jax.config.jax_enable_x64 else "float32"
    if name == "mlx":  # (its inspection API's)
        return "float32"
    return "float64"


# ------------------------------------------------------------- modes


@dataclass(frozen=True)
class Mode:
    """One way a namespace runs code.

    ``values``: whether results hold values (shape-only modes check shape and
    dtype). ``context``: entered around making the arguments and the call
    (None: none). ``wrap``: how the call is run (None: as it is).
    """

    lib: str
    name: str
    values: bool = True
    context: Callable[[], Any] | None = None
    wrap: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _torch_ctx(which: str) -> Callable[[], Any]:
    def enter() -> Any:
        import torch

        if which == "no_grad":
            return torch.no_grad()
        if which == "inference_mode":
            return torch.inference_mode()
        if which == "fake":
            from torch._subclasses.fake_tensor import FakeTensorMode

            return FakeTensorMode()
        if which == "meta":
            return torch.device("meta")
        if which == "one rank":
            from helpers.torch_subclasses import rank_of

            return rank_of(1, 0, (1,))
        raise AssertionError(which)

    return enter


@contextlib.contextmanager
def _jax_x64(on: bool) -> Iterator[None]:
    import jax

    before = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", on)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)


@contextlib.contextmanager
def _jax_mesh() -> Iterator[None]:
    """A mesh of two devices, its axis Explicit, set by ``jax.set_mesh``
    (the matrix's ``jit on a mesh``: x sharded along it, `mesh_sharded`)."""
    import jax
    import pytest

    if not hasattr(jax.sharding, "reshard") or len(jax.devices()) < 2:
        pytest.skip("needs JAX 0.7's sharding in types and 2 JAX devices")
    kind = jax.sharding.AxisType.Explicit
    with jax.set_mesh(jax.make_mesh((2,), ("m",), axis_types=(kind,))):
        yield


def mesh_sharded(value: Any) -> Any:
    """A JAX array of rank 3 or more split along its second dimension over
    the mesh `_jax_mesh` sets, where that dimension divides; else as it is."""
    import jax

    if not isinstance(value, jax.Array) or value.ndim < 3 or value.shape[1] % 2:
        return value
    mesh = jax.sharding.get_abstract_mesh()
    spec = jax.sharding.PartitionSpec(None, mesh.axis_names[0])
    return jax.device_put(value, spec)


def _strict_flags(**flags: Any) -> Callable[[], Any]:
    def enter() -> Any:
        import array_api_strict

        return array_api_strict.ArrayAPIStrictFlags(**flags)

    return enter


MODES: list[Mode] = [
    Mode("numpy", "eager"),
    Mode("numpy", "subclass", wrap="subclass"),
    Mode("cupy", "eager"),
    Mode("torch", "eager"),
    Mode("torch", "no_grad", context=_torch_ctx("no_grad")),
    Mode("torch", "inference_mode", context=_torch_ctx("inference_mode")),
    Mode("torch", "compile static", wrap="compile", extra={"dynamic": False}),
    Mode("torch", "compile dynamic", wrap="compile", extra={"dynamic": True}),
    Mode("torch", "compile auto", wrap="compile", extra={"dynamic": None}),
    Mode("torch", "export strict", wrap="export", extra={"strict": True}),
    Mode("torch", "export non-strict", wrap="export", extra={"strict": False}),
    Mode("torch", "FakeTensorMode", values=False, context=_torch_ctx("fake")),
    Mode("torch", "meta device", values=False, context=_torch_ctx("meta")),
    Mode("torch", "func.vmap", wrap="torch_vmap"),
    Mode("torch", "func.grad", wrap="torch_grad"),
    # x and a fresh out as DTensors (x sharded on its columns, out on its
    # first dimension); the subclass tests check every rank of larger meshes.
    Mode("torch", "DTensor", context=_torch_ctx("one rank"), wrap="dtensor"),
    # x and a fresh out of a __torch_dispatch__ subclass of the tests' own.
    Mode("torch", "dispatch subclass", wrap="torch_subclass"),
    Mode("jax", "eager"),
    Mode("jax", "eager x64", context=lambda: _jax_x64(True)),
    Mode("jax", "jit", wrap="jit"),
    Mode("jax", "jit x64", wrap="jit", context=lambda: _jax_x64(True)),
    # eye_like's x sharded over two devices (an Explicit mesh axis): the
    # result has jit(jnp.zeros_like)(x)'s sharding (four devices, every k:
    # tests/backends/test_jax_mesh.py).
    Mode("jax", "jit on a mesh", wrap="jax_mesh", context=_jax_mesh),
    Mode("jax", "vmap", wrap="jax_vmap"),
    Mode("jax", "grad", wrap="jax_grad"),
    Mode("jax", "eval_shape", values=False, wrap="eval_shape"),
    Mode("jax", "jit lower", values=False, wrap="lower"),
    Mode("jax", "export", wrap="jax_export"),
    Mode("array_api_strict", "default flags"),
    Mode(
        "array_api_strict",
        "2023.12",
        context=_strict_flags(api_version="2023.12"),
    ),
    # (No inspection API: asking for one raises.)
    Mode(
        "array_api_strict",
        "2022.12",
        context=_strict_flags(api_version="2022.12"),
    ),
    Mode(
        "array_api_strict",
        "no data-dependent shapes",
        context=_strict_flags(data_dependent_shapes=False, boolean_indexing=False),
    ),
    Mode("array_api_strict", "device1", wrap="strict_device1"),
    Mode("dask", "lazy"),
    Mode("dask", "distributed", wrap="distributed"),
    # Third-party namespaces eyelike has no module for (the generic path),
    # installed by the namespaces session only: skipped elsewhere.
    Mode("sparse", "eager"),
    Mode("ndonnx", "eager"),
    Mode("marray", "eager"),
    Mode("cubed", "lazy"),
    Mode("mlx", "eager"),
]

LIBS = {
    "numpy": "numpy",
    "cupy": "cupy",
    "torch": "torch",
    "jax": "jax.numpy",
    "array_api_strict": "array_api_strict",
    "dask": "dask.array",
    "sparse": "sparse",
    "ndonnx": "ndonnx",
    "marray": "marray",  # (its namespace over NumPy's: `lib_or_skip`)
    "cubed": "cubed",
    "mlx": "mlx.core",
}


_COMPILE = ("compile static", "compile dynamic", "compile auto")
_JAX_TRACED = ("jit", "jit x64", "jit on a mesh", "eval_shape", "jit lower", "export")
_INFERENCE = "torch lets an inference tensor be written only inside inference_mode"
_PARAMETER = (
    "autograd cannot track an in-place fill of a tensor that requires grad "
    "(under no_grad it can)"
)
_EVERY = ("*",)


@dataclass(frozen=True)
class Refusal:
    """Cells refused on purpose: ``lib``, in ``modes``, ``param`` given as
    one of ``forms`` ("*": any), raise ``exc`` with ``words`` in the message,
    for ``reason``."""

    lib: str
    modes: tuple[str, ...]
    param: str
    forms: tuple[str, ...]
    exc: type[Exception]
    words: str
    reason: str

    def covers(self, lib: str, mode: str, param: str, form: str) -> bool:
        return (
            lib == self.lib
            and _names(self.param, param)
            and (self.modes == _EVERY or mode in self.modes)
            and (self.forms == _EVERY or form in self.forms)
        )


_COUNT_ARRAYS = ("0-d namespace array", "0-d namespace int32")
_BATCH_ARRAYS = ("1-D namespace array", "1-D namespace array of 2")
_NP_SCALARS = ("NumPy integer", "NumPy uint8", "NumPy int32", "0-d NumPy array")
_NP_K_ARRAYS = tuple(f"NumPy {dt} array" for dt in _int_dtypes(None))
_TENSOR_DATA = (
    "a count read from an input tensor's values is the traced program's data: "
    "torch's own data-dependent error, not a TypeError naming the parameter "
    "(eyelike cannot tell it from a tensor made inside the function, which "
    "works; non-strict export takes it as a symbolic size)"
)
_CLOSED_OVER = (
    "Dynamo traces a NumPy value made outside the traced function as a "
    "tensor whose values are known only when the program runs"
)


REFUSALS: list[Refusal] = [
    Refusal(
        "jax",
        _EVERY,
        "out",
        _EVERY,
        TypeError,
        "out",
        "JAX arrays are immutable: no out=",
    ),
    Refusal(
        "dask",
        _EVERY,
        "out",
        _EVERY,
        TypeError,
        "out",
        "Dask arrays are lazy and immutable: no out=",
    ),
    Refusal(
        "cubed",
        _EVERY,
        "out",
        _EVERY,
        TypeError,
        "out",
        "cubed arrays are lazy and immutable: no out=",
    ),
    Refusal(
        "sparse",
        _EVERY,
        "out",
        _EVERY,
        TypeError,
        "out",
        "pydata sparse's arrays have no item assignment: no out=",
    ),
    Refusal(
        "torch",
        (
            "eager",
            "no_grad",
            "FakeTensorMode",
            "meta device",
            "func.vmap",
            "func.grad",
            "export non-strict",
            "DTensor",
            "dispatch subclass",
        ),
        "out",
        ("inference tensor",),
        ValueError,
        "out",
        _INFERENCE,
    ),
    Refusal(
        "torch",
        (
            "eager",
            "FakeTensorMode",
            "meta device",
            "func.vmap",
            "func.grad",
            *_COMPILE,
            "export strict",
            "export non-strict",
            "DTensor",
            "dispatch subclass",
        ),
        "out",
        ("nn.Parameter",),
        ValueError,
        "out",
        _PARAMETER,
    ),
    Refusal(
        "torch",
        ("func.grad",),
        "out",
        ("fresh", "strided view"),
        ValueError,
        "out",
        "a differentiating torch.func transform cannot write into a tensor "
        "made outside it",
    ),
    Refusal(
        "torch",
        ("meta device",),
        "n_rows",
        _COUNT_ARRAYS,
        TypeError,
        "n_rows",
        "a meta tensor holds no value",
    ),
    Refusal(
        "torch",
        ("meta device",),
        "batch_shape",
        _BATCH_ARRAYS,
        TypeError,
        "batch_shape",
        "a meta tensor holds no values",
    ),
    Refusal(
        "jax",
        _JAX_TRACED,
        "n_rows",
        _COUNT_ARRAYS,
        TypeError,
        "n_rows",
        "a count read from a traced array is not static, as "
        "XLA's shapes are (jnp.eye refuses one too)",
    ),
    Refusal(
        "jax",
        _JAX_TRACED,
        "batch_shape",
        _BATCH_ARRAYS,
        TypeError,
        "batch_shape",
        "a batch shape read from a traced array is not static",
    ),
    Refusal(
        "torch",
        ("FakeTensorMode",),
        "batch_shape",
        ("1-D namespace array of 2",),
        TypeError,
        "batch_shape",
        "a FakeTensorMode's tensor of more than one element holds no values",
    ),
    Refusal(
        "torch",
        ("FakeTensorMode",),
        "openvino.batch_shape",
        ("1-D namespace int32",),
        TypeError,
        "batch_shape",
        "a FakeTensorMode's tensor of more than one element holds no values",
    ),
    Refusal(
        "torch",
        ("meta device",),
        "openvino.*",
        _EVERY,
        TypeError,
        "num_rows",
        "a meta tensor holds no value (num_rows, the first input read, is one)",
    ),
    Refusal(
        "jax",
        _JAX_TRACED,
        "openvino.*",
        _EVERY,
        TypeError,
        "num_rows",
        "a count read from a traced array is not static, as XLA's shapes are "
        "(num_rows, the first input read, is one)",
    ),
    Refusal(
        "jax",
        ("jit on a mesh",),
        "device",
        ("the namespace's default", "a name"),
        ValueError,
        "device",
        "under jax.jit a result is placed on the mesh set by jax.set_mesh: "
        "one device off it is refused (JAX refuses jnp.eye's too)",
    ),
]


# Cells that fail today, each group with what goes wrong: open work, run as
# strict xfails (a fixed cell fails the run until it leaves this list).
KNOWN_GAPS: list[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], str]] = [
    (
        "jax",
        ("jit on a mesh",),
        ("x",),
        ("no rows",),
        "JAX's own: an empty array split over a mesh under jit holds its "
        "whole shape on each device, which np.asarray cannot read (JAX 0.10); "
        "the eye has jit(jnp.zeros_like)(x)'s sharding, and zeros_like's "
        "result fails alike",
    ),
    (
        "mlx",
        ("eager",),
        ("device",),
        ("the namespace's default",),
        "mlx's eye takes no device= (a stream= of its own): the call fails "
        "naming mlx.core.eye, a RuntimeError, not a refusal naming device",
    ),
    (
        "torch",
        ("compile dynamic",),
        ("k",),
        ("range",),
        "torch.compile(dynamic=True) makes a range's bounds symbolic, and "
        "Dynamo cannot list such a range (an internal error of its own; a "
        "list or tuple k works)",
    ),
    (
        "torch",
        ("export strict",),
        ("n_rows",),
        _COUNT_ARRAYS,
        _TENSOR_DATA,
    ),
    (
        "torch",
        (*_COMPILE, "export strict"),
        ("batch_shape",),
        _BATCH_ARRAYS,
        _TENSOR_DATA,
    ),
    (
        "torch",
        _COMPILE,
        ("n_rows", "n_cols", "batch_shape"),
        ("NumPy uint8", "NumPy int32", "1-D NumPy array"),
        _CLOSED_OVER + " (Dynamo reads a 0-d int64 one as a constant): "
        "torch's own data-dependent error, not yet a TypeError naming the "
        "parameter",
    ),
    (
        "torch",
        ("export strict",),
        ("n_rows", "n_cols", "batch_shape", "k"),
        (*_NP_SCALARS, "1-D NumPy array"),
        _CLOSED_OVER + ": torch's own data-dependent error, not yet a "
        "TypeError naming the parameter",
    ),
    (
        "torch",
        ("export strict",),
        ("k",),
        _NP_K_ARRAYS,
        _CLOSED_OVER + ", which strict export captures as a fake constant: "
        "the program returns a FakeTensor (torch.as_tensor of it does too; "
        "one made inside the module is right)",
    ),
    (
        "torch",
        _COMPILE,
        ("onnx.dtype",),
        ("NumPy integer enum",),
        _CLOSED_OVER + " (Dynamo reads a 0-d int64 one as a constant): "
        "torch's own data-dependent error, not yet a TypeError naming the "
        "parameter",
    ),
    (
        "torch",
        ("export strict",),
        ("onnx.k", "onnx.dtype"),
        ("NumPy integer", "NumPy integer enum"),
        _CLOSED_OVER + ": torch's own data-dependent error, not yet a "
        "TypeError naming the parameter",
    ),
    (
        "torch",
        _COMPILE,
        ("n_rows",),
        ("0-d namespace int32",),
        _TENSOR_DATA + " (a 0-d int64 one Dynamo reads as a constant)",
    ),
    (
        "torch",
        (*_COMPILE, "export strict"),
        ("openvino.*",),
        _EVERY,
        _TENSOR_DATA + " (here an int32 one, num_rows)",
    ),
    (
        "torch",
        (*_COMPILE, "export strict"),
        ("out",),
        ("inference tensor",),
        "Dynamo cannot ask whether a tensor is an inference tensor (a graph "
        "break it calls fundamental): the compiled program's write is refused "
        "by torch's own RuntimeError when it runs, out untouched",
    ),
]


def _names(listed: str, param: str) -> bool:
    """Whether a table's ``listed`` parameter names ``param``: itself, or
    an adapter's every input (``"openvino.*"``)."""
    return listed == param or (listed.endswith(".*") and param.startswith(listed[:-1]))


def known_gap(lib: str, mode: str, param: str, form: str) -> str | None:
    """Why a cell is a known gap, or None."""
    for gap_lib, modes, params, forms, reason in KNOWN_GAPS:
        if (
            gap_lib == lib
            and mode in modes
            and any(_names(p, param) for p in params)
            and (forms == _EVERY or form in forms)
        ):
            return reason
    return None


def refusal(lib: str, mode: str, param: str, form: str) -> Refusal | None:
    """The listed refusal for a cell, or None."""
    for listed in REFUSALS:
        if listed.covers(lib, mode, param, form):
            return listed
    return None


def torch_forms() -> list[Form]:
    """The torch-only out forms (kinds of tensor torch has)."""

    def inference(lib: Any) -> Any:
        with lib.inference_mode():
            return lib.full((*BATCH, ROWS, COLS), 7.0, dtype=lib.float32)

    def parameter(lib: Any) -> Any:
        return lib.nn.Parameter(lib.full((*BATCH, ROWS, COLS), 7.0, dtype=lib.float32))

    return [
        Form("out", "inference tensor", inference, only=("torch",)),
        Form("out", "nn.Parameter", parameter, only=("torch",)),
    ]


FORMS.extend(torch_forms())


def forms_for(lib: str, entry: str) -> list[Form]:
    params = PARAMS if entry == "eye" else LIKE_PARAMS
    return [f for f in FORMS if f.param in params and (not f.only or lib in f.only)]


def render() -> str:
    """The tables as the documentation shows them (reStructuredText)."""
    lines = ["Argument forms", "--------------", ""]
    for param in (*PARAMS, "x"):
        names = [
            f.name + (f" ({', '.join(f.only)})" if f.only else "")
            for f in FORMS
            if f.param == param
        ]
        lines.append(f"``{param}``: {'; '.join(names)}.")
        lines.append("")
    lines += ["Operator adapters and command line", "-" * 34, ""]
    for title, forms in (
        ("``eyelike.onnx.eye_like``", ONNX_FORMS),
        ("``eyelike.openvino.eye``", OPENVINO_FORMS),
        (
            "The command line (through a pipe on each backend, and a shell's pipe)",
            CLI_FORMS,
        ),
    ):
        lines.append(f"{title}:")
        lines.append("")
        for param in dict.fromkeys(f.param for f in forms):
            names = [
                f.name + (f" ({', '.join(f.only)})" if f.only else "")
                for f in forms
                if f.param == param
            ]
            what = "arguments" if param == "words" else f"``{param}``"
            lines.append(f"* {what}: {'; '.join(names)}.")
        lines.append("")
    lines += ["Execution modes", "---------------", ""]
    for lib in LIBS:
        names = [m.name for m in MODES if m.lib == lib]
        lines.append(f"{lib}: {'; '.join(names)}.")
        lines.append("")
    lines += ["Refused on purpose", "------------------", ""]
    for r in REFUSALS:
        modes = "every mode" if r.modes == _EVERY else ", ".join(r.modes)
        what = f"``{r.param}``" + (
            "" if r.forms == _EVERY else f" as {', '.join(r.forms)}"
        )
        lines.append(f"* {r.lib}, {modes}: {what} ({r.exc.__name__}): {r.reason}.")
    lines += ["", "Known gaps (open)", "-----------------", ""]
    for lib, modes, params, forms, reason in KNOWN_GAPS:
        what = ", ".join(params) + (
            "" if forms == _EVERY else f" as {', '.join(forms)}"
        )
        lines.append(f"* {lib}, {', '.join(modes)}: {what}: {reason}.")
    return "\n".join(lines) + "\n"


# ------------------------------------------------ the other entry points


def _openvino_type(name: str) -> Callable[[Any], Any]:
    def make(lib: Any) -> Any:
        import pytest

        openvino = pytest.importorskip("openvino")
        return getattr(openvino.Type, name)

    return make


def _tensor_proto(name: str) -> Callable[[Any], Any]:
    def make(lib: Any) -> Any:
        import pytest

        onnx = pytest.importorskip("onnx")
        return getattr(onnx.TensorProto, name)

    return make


# eyelike.onnx.eye_like(x, dtype=, k=): EyeLike-9's attributes.
ONNX_FORMS: list[Form] = [
    Form("k", "int", lambda lib: 1, 1),
    Form("k", "negative int", lambda lib: -2, -2),
    Form("k", "NumPy integer", lambda lib: np.int64(1), 1),
    Form("k", "past the matrix", lambda lib: 2**62, 2**62),
    Form("dtype", "None", lambda lib: None, None),
    Form("dtype", "enum int", lambda lib: 6, "int32"),
    Form("dtype", "bool enum", lambda lib: 9, "bool"),
    Form("dtype", "NumPy integer enum", lambda lib: np.int32(3), "int8"),
    Form("dtype", "TensorProto member", _tensor_proto("UINT8"), "uint8"),
]

# eyelike.openvino.eye(num_rows, num_columns, diagonal_index, batch_shape,
# output_type=): Eye-9's inputs (the base call gives num_rows and
# diagonal_index as 0-d int32 arrays of the namespace, which the result
# follows).
OPENVINO_FORMS: list[Form] = [
    Form(
        "num_rows",
        "0-d namespace int32",
        lambda lib: lib.asarray(ROWS, dtype=lib.int32),
        ROWS,
    ),
    Form(
        "num_rows",
        "1-element namespace int32",
        lambda lib: lib.asarray([ROWS], dtype=lib.int32),
        ROWS,
    ),
    Form("num_columns", "int", lambda lib: COLS, COLS),
    Form("num_columns", "NumPy int64", lambda lib: np.int64(COLS), COLS),
    Form("num_columns", "NumPy int32", lambda lib: np.int32(COLS), COLS),
    Form("diagonal_index", "negative int", lambda lib: -1, -1),
    Form("diagonal_index", "int64 beyond int32", lambda lib: 2**40, 2**40),
    Form(
        "diagonal_index",
        "0-d namespace int32",
        lambda lib: lib.asarray(-2, dtype=lib.int32),
        -2,
    ),
    Form("batch_shape", "None", lambda lib: None, ()),
    Form("batch_shape", "empty list", lambda lib: [], ()),
    Form("batch_shape", "tuple", lambda lib: (2,), (2,)),
    Form(
        "batch_shape",
        "1-D namespace int32",
        lambda lib: lib.asarray([1, 2], dtype=lib.int32),
        (1, 2),
    ),
    Form(
        "batch_shape",
        "1-D NumPy int64",
        lambda lib: np.array([2], np.int64),
        (2,),
        only=("numpy",),  # (every array input of one namespace)
    ),
    Form("output_type", "name", lambda lib: "i8", "int8"),
    Form("output_type", "boolean", lambda lib: "boolean", "bool"),
    Form("output_type", "openvino.Type", _openvino_type("u8"), "uint8"),
]

# The command line's words after ``eyelike 3 4 --backend LIB``; plain:
# (rows, cols, batch, k, dtype or None for the library's default).
CLI_FORMS: list[Form] = [
    Form("words", "defaults", lambda lib: [], (3, 4, (), 0, None)),
    Form("words", "-k", lambda lib: ["-k", "1"], (3, 4, (), 1, None)),
    Form("words", "negative -k", lambda lib: ["-k", "-2"], (3, 4, (), -2, None)),
    Form(
        "words",
        "-k per matrix",
        lambda lib: ["--batch-shape", "2", "-k", "0,-1"],
        (3, 4, (2,), [0, -1], None),
    ),
    Form(
        "words",
        "--batch-shape",
        lambda lib: ["--batch-shape", "1,2"],
        (3, 4, (1, 2), 0, None),
    ),
    Form("words", "--dtype", lambda lib: ["--dtype", "int8"], (3, 4, (), 0, "int8")),
    Form(
        "words", "--dtype bool", lambda lib: ["--dtype", "bool"], (3, 4, (), 0, "bool")
    ),
    Form(
        "words",
        "--device cpu",
        lambda lib: ["--device", "cpu"],
        (3, 4, (), 0, None),
        only=("numpy", "torch", "jax"),
    ),
    Form(
        "words",
        "--device device1",
        lambda lib: ["--device", "device1"],
        (3, 4, (), 0, None),
        only=("array_api_strict",),
    ),
    # Data to standard output, read back by np.load / np.loadtxt.
    *(
        Form(
            "words",
            f"--format {fmt}",
            lambda lib, fmt=fmt: ["--format", fmt, "--batch-shape", "2", "-k", "0,1"],
            (3, 4, (2,), [0, 1], None),
        )
        for fmt in ("npy", "npz", "txt", "csv")
    ),
]
