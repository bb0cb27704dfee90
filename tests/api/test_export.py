"""Sizes known only when the model runs: ``torch.export`` (and the ONNX
exporter on top of it, run in ONNX Runtime and OpenVINO), ``jax.export``,
``torch.func.vmap`` and ``jax.vmap``, each against the library's own idiom
where the idiom passes too.

Each test says in its docstring which bug it targets.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import eyelike

torch = pytest.importorskip("torch")
Dim = torch.export.Dim


def _want(batch: int, n_rows: int, n_cols: int, ks: Any) -> np.ndarray[Any, Any]:
    ks = np.broadcast_to(np.asarray(ks), (batch,))
    return np.stack([np.eye(n_rows, n_cols, int(k)) for k in ks])


class Plus(torch.nn.Module):
    def forward(self, x: Any) -> Any:
        return x + eyelike.eye_like(x)


class PlusK(torch.nn.Module):
    def forward(self, x: Any, k: Any) -> Any:
        return x + eyelike.eye_like(x, k=k)


class Shift(torch.nn.Module):
    def forward(self, x: Any, k: Any) -> Any:
        eye = eyelike.eye(x.shape[-1], batch_shape=x.shape[0], k=k, xp=torch)
        return x @ eye


def _export(module: Any, args: tuple[Any, ...], shapes: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own notes while exporting
        return torch.export.export(module, args, dynamic_shapes=shapes)


def _only_torch_ops(program: Any) -> None:
    """Every call in the graph is an ATen op or size arithmetic."""
    for node in program.graph.nodes:
        if node.op == "call_function":
            target = node.target
            where = getattr(target, "__module__", "") or ""
            assert str(target).startswith("aten.") or where == "_operator", target


@pytest.mark.parametrize(
    "shapes",
    [
        ({0: Dim("B")},),
        ({0: Dim("B", max=64)},),
        ({0: Dim.AUTO, 1: Dim.AUTO, 2: Dim.AUTO},),
        ({0: Dim("B"), 1: Dim("R"), 2: Dim("C")},),
    ],
    ids=["batch", "batch-max-64", "auto", "batch-rows-cols"],
)
def test_torch_export_with_symbolic_sizes(shapes: Any) -> None:
    """Bug: an unbounded Dim("B") failed with "Expected op to be '==', got <=
    for B <= 2106375168/5": eyelike's memory check, made from the RAM of the
    exporting machine, became a guard of the program. The program runs at
    other sizes, identical to eager, and holds only torch's ops."""
    program = _export(Plus(), (torch.rand(4, 3, 5),), shapes)
    _only_torch_ops(program)
    sizes = [(9, 3, 5), (2, 3, 5), (33, 3, 5)]
    if len(shapes[0]) == 3:  # the matrix dims are symbolic too
        sizes += [(9, 6, 2), (3, 1, 7)]
    for size in sizes:
        x = torch.rand(size)
        torch.testing.assert_close(program.module()(x), Plus()(x), rtol=0, atol=0)
    # No bound from this machine's memory: unbounded, or the one given.
    for bound in program.range_constraints.values():
        upper = str(bound.upper)
        assert upper == "int_oo" or int(upper) <= 64, upper


def test_torch_export_per_matrix_k_and_sizes_from_x() -> None:
    """Bug: per-matrix k with Dim("B") hit the same memory guard, and
    eye(x.shape[-1], batch_shape=x.shape[0], k=k) specialised B to 4
    ("Constraints violated (B)")."""
    batch = Dim("B")
    k4 = torch.tensor([0, 1, -1, 2])
    cases = ((PlusK(), torch.rand(4, 3, 5)), (Shift(), torch.rand(4, 5, 5)))
    for module, x in cases:
        program = _export(module, (x, k4), ({0: batch}, {0: batch}))
        _only_torch_ops(program)
        x9 = torch.rand(9, *x.shape[1:])
        k9 = torch.arange(9) % 5 - 2
        torch.testing.assert_close(
            program.module()(x9, k9), module(x9, k9), rtol=0, atol=0
        )


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_torch_onnx_export_runs_in_onnx_runtime_and_openvino(tmp_path: Path) -> None:
    """torch.export -> ONNX (dynamo exporter, a dynamic batch) -> ONNX Runtime
    and OpenVINO at another batch size: identical results."""
    pytest.importorskip("onnxscript")
    ort = pytest.importorskip("onnxruntime")
    ov = pytest.importorskip("openvino")
    batch = Dim("B")
    x, k = torch.rand(4, 3, 5), torch.tensor([0, 1, -1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onnx_program = torch.onnx.export(
            PlusK(), (x, k), dynamo=True, dynamic_shapes=({0: batch}, {0: batch})
        )
    path = tmp_path / "plus_k.onnx"
    onnx_program.save(str(path))
    x9 = np.random.default_rng(0).random((9, 3, 5), dtype=np.float32)
    k9 = (np.arange(9) % 5 - 2).astype(np.int64)
    want = PlusK()(torch.from_numpy(x9), torch.from_numpy(k9)).numpy()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    feeds = dict(zip(names, (x9, k9), strict=True))
    np.testing.assert_array_equal(session.run(None, feeds)[0], want)
    compiled = ov.Core().compile_model(ov.convert_model(str(path)), "CPU")
    np.testing.assert_array_equal(compiled([x9, k9])[0], want)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_torch_func_vmap_over_k_and_x(compiled: bool) -> None:
    """Bug: torch.func.vmap over k (and over (x, k)) raised "stack expects
    each tensor to be equal size": the per-matrix path counted each
    sample's ones."""
    ks = torch.tensor([0, 1, -1, 5])
    over_k = torch.func.vmap(lambda k: eyelike.eye(3, 4, k=k, xp=torch))
    over_xk = torch.func.vmap(lambda a, k: a + eyelike.eye_like(a, k=k))
    if compiled:
        over_k = torch.compile(over_k, fullgraph=True, backend="eager")
        over_xk = torch.compile(over_xk, fullgraph=True, backend="eager")
    np.testing.assert_array_equal(over_k(ks).numpy(), _want(4, 3, 4, ks))
    xs = torch.zeros(4, 3, 3, dtype=torch.float64)
    np.testing.assert_array_equal(over_xk(xs, ks).numpy(), _want(4, 3, 3, ks))


def test_jax_export_with_symbolic_sizes() -> None:
    """Bug: jax.export of x + eye_like(x) with a symbolic batch (and matrix
    dims) raised "x must have a known shape; got (b, 3, 5)", and
    eye(..., batch_shape=k.shape[0]) "batch_shape must be an int or a
    sequence of ints; got b". Serialised, read back and called at other
    sizes, the results are exact."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    export = pytest.importorskip("jax.export")  # (older JAX does not import it)
    b, r, c = export.symbolic_shape("b, r, c")
    f = jax.jit(lambda x: x + eyelike.eye_like(x, k=1))
    for spec, run in (((b, 3, 5), (7, 3, 5)), ((b, r, c), (2, 4, 6))):
        exported = export.export(f)(jax.ShapeDtypeStruct(spec, jnp.float32))
        back = export.deserialize(exported.serialize())
        got = np.asarray(back.call(jnp.zeros(run, jnp.float32)))
        np.testing.assert_array_equal(got, _want(run[0], run[1], run[2], 1))
    make = jax.jit(lambda k: eyelike.eye(3, 5, batch_shape=k.shape[0], k=k, xp=jnp))
    exported = export.export(make)(jax.ShapeDtypeStruct((b,), jnp.int32))
    k = jnp.array([0, 1, -1, 4, 9], dtype=jnp.int32)
    got = np.asarray(export.deserialize(exported.serialize()).call(k))
    np.testing.assert_array_equal(got, _want(5, 3, 5, k))


@pytest.mark.parametrize("x64", [False, True], ids=["x64 off", "x64 on"])
def test_jax_export_k_of_every_integer_dtype_at_its_extremes(x64: bool) -> None:
    """Bug (a newcomer's read): with symbolic sizes a per-matrix k was cast
    into the index type before it was clamped, so a uint64 past 2**63 (x64
    on) or a uint32 past 2**31 (off: int32 indices) wrapped into a
    diagonal. Every integer dtype JAX has in that mode, at its extremes."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    export = pytest.importorskip("jax.export")  # (older JAX does not import it)
    before = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", x64)
    try:
        names = ["int8", "int16", "int32", "uint8", "uint16", "uint32"]
        if x64:
            names += ["int64", "uint64"]
        r, c = export.symbolic_shape("r, c")
        f = jax.jit(lambda x, k: x + eyelike.eye_like(x, k=k))
        for name in names:
            info = np.iinfo(name)
            values = [int(info.min), int(info.max), int(info.max) - 1, 1, 0]
            k = jnp.asarray(np.array(values, dtype=name))
            spec = jax.ShapeDtypeStruct((len(values), r, c), jnp.float32)
            exported = export.export(f)(spec, jax.ShapeDtypeStruct(k.shape, k.dtype))
            for n_rows, n_cols in ((3, 5), (6, 2)):
                x = jnp.zeros((len(values), n_rows, n_cols), jnp.float32)
                got = exported.call(x, k)
                clamped = [min(max(v, -n_rows), n_cols) for v in values]
                want = _want(len(values), n_rows, n_cols, clamped)
                np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)
    finally:
        jax.config.update("jax_enable_x64", before)


@pytest.mark.parametrize("k", [[0, 1, -1], 2**63], ids=["list", "int past int64"])
def test_host_k_with_symbolic_matrix_sizes_strict(k: Any) -> None:
    """Bug (review): strict export traces by Dynamo, where a symbolic size
    reads as an int: a list k was clamped by the sizes, which fixed them
    ("You marked r as dynamic but your code specialized it")."""

    class Plus(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return x + eyelike.eye_like(x, k=k)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(
            Plus(),
            (torch.zeros(3, 4, 5),),
            dynamic_shapes=({1: Dim("R"), 2: Dim("C")},),
            strict=True,
        )
    for size in ((3, 4, 5), (3, 6, 2), (3, 2, 7)):
        got = program.module()(torch.zeros(size)).numpy()
        np.testing.assert_array_equal(got, _want(*size, k))


def test_jax_vmap_over_k_and_x() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    ks = jnp.array([0, 1, -1])
    got = jax.vmap(lambda k: eyelike.eye(3, 4, k=k, xp=jnp))(ks)
    np.testing.assert_array_equal(np.asarray(got), _want(3, 3, 4, ks))
    xs = jnp.zeros((3, 4, 4))
    got = jax.vmap(lambda a, k: a + eyelike.eye_like(a, k=k))(xs, ks)
    np.testing.assert_array_equal(np.asarray(got), _want(3, 4, 4, ks))


@pytest.mark.parametrize(
    "k",
    [np.int64(5), [5], np.array(2), np.int64(-5), np.array([1]), [1, -1, 2, 0]],
    ids=["np.int64", "list1", "0-d", "negative", "1-element", "per-matrix list"],
)
def test_host_k_with_symbolic_matrix_sizes(k: Any) -> None:
    """Bug (review): a NumPy scalar, list or array k was clamped by
    comparing it with the symbolic sizes: under torch.export a guard baked
    into the program (wrong at other sizes) or an AttributeError, under
    jax.export JAX's InconclusiveDimensionOperation."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")

    class Plus(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return x + eyelike.eye_like(x, k=k)

    program = _export(Plus(), (torch.zeros(4, 3, 5),), ({1: Dim("R"), 2: Dim("C")},))
    export = pytest.importorskip("jax.export")  # (older JAX does not import it)
    r, c = export.symbolic_shape("r, c")
    f = jax.jit(lambda x: x + eyelike.eye_like(x, k=k))
    exported = jax.export.export(f)(jax.ShapeDtypeStruct((4, r, c), jnp.float32))
    for size in ((4, 3, 3), (4, 6, 2), (4, 2, 7)):
        want = _want(*size, k)
        got = program.module()(torch.zeros(size)).numpy()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.asarray(exported.call(jnp.zeros(size))), want)
