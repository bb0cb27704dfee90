"""The conformance matrix: every argument form the docs name, in every
execution mode each namespace promises (the tables: ``helpers/matrix.py``).

Each cell gives the eager NumPy oracle's values, dtype and shape on the
right device, or the refusal the table lists on purpose: a TypeError or
ValueError naming the parameter (under ``torch.compile(fullgraph=True)``,
the error torch wraps it in carries it as its cause), with ``out``
untouched. A combination of several forms at once is sampled by
hypothesis in eager mode.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from array_api_compat import array_namespace
from helpers import HAS_GPU, reference
from helpers import matrix as table
from hypothesis import given, settings
from hypothesis import strategies as st

import eyelike
from eyelike._validate.dtypes import dtype_name

ROOT = Path(__file__).resolve().parents[2]


class _Sub(np.ndarray):  # type: ignore[type-arg]
    """A NumPy subclass, as a caller's own array type."""


def _cells() -> list[Any]:
    cells = []
    for mode in table.MODES:
        for entry in ("eye", "eye_like"):
            for form in table.forms_for(mode.lib, entry):
                ident = f"{mode.lib}-{mode.name}-{entry}-{form.param}-{form.name}"
                gap = table.known_gap(mode.lib, mode.name, form.param, form.name)
                marks = table.lib_marks(mode.lib)
                if gap:
                    marks.append(pytest.mark.xfail(strict=True, reason=gap))
                cells.append(pytest.param(mode, entry, form, id=ident, marks=marks))
    return cells


# The operator adapters, each in every mode too: ``x`` (EyeLike-9), or the
# counts and index (Eye-9) as the namespace's arrays, are the inputs a
# traced program gets.
_ADAPTERS = {"onnx": table.ONNX_FORMS, "openvino": table.OPENVINO_FORMS}
_CALLS = {
    "eye": eyelike.eye,
    "eye_like": eyelike.eye_like,
    "onnx": eyelike.onnx.eye_like,
    "openvino": eyelike.openvino.eye,
}


def _adapter_cells() -> list[Any]:
    cells = []
    for mode in table.MODES:
        for entry, forms in _ADAPTERS.items():
            for form in forms:
                if form.only and mode.lib not in form.only:
                    continue
                param = f"{entry}.{form.param}"
                ident = f"{mode.lib}-{mode.name}-{param}-{form.name}"
                gap = table.known_gap(mode.lib, mode.name, param, form.name)
                marks = table.lib_marks(mode.lib)
                if gap:
                    marks.append(pytest.mark.xfail(strict=True, reason=gap))
                cells.append(pytest.param(mode, entry, form, id=ident, marks=marks))
    return cells


def _lib(name: str) -> Any:
    return table.lib_or_skip(name)


@pytest.fixture(scope="module")
def dask_client() -> Any:
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        )
        client = distributed.Client(cluster)
    yield client
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client.close()
        cluster.close()


def _arguments(mode: table.Mode, entry: str, form: table.Form, lib: Any) -> Any:
    """The call's positional and keyword arguments, and the plain values."""
    plain: dict[str, Any] = {
        "rows": table.ROWS,
        "cols": table.COLS,
        "batch": table.BATCH,
        "k": table.K,
        "dtype": "float32",
    }
    kwargs: dict[str, Any] = {"k": table.K}
    device = None
    if mode.wrap == "strict_device1":
        device = lib.Device("device1")
    if entry == "eye":
        args: list[Any] = [table.ROWS, table.COLS]
        kwargs.update(batch_shape=table.BATCH, dtype=lib.float32, xp=lib)
        if device is not None:
            kwargs["device"] = device
    else:
        on = {} if device is None else {"device": device}
        x = lib.zeros((*table.BATCH, table.ROWS, table.COLS), dtype=lib.float32, **on)
        args = [x]
    value = form.make(lib)
    if device is not None and form.param in ("out", "x") and value is not None:
        # (asarray, not to_device: array-api-strict 2.3's to_device needs NumPy 2)
        value = lib.asarray(value, device=device)
    if form.param == "x":
        args[0] = value
        *plain["batch"], plain["rows"], plain["cols"] = form.plain
        plain["batch"] = tuple(plain["batch"])
    elif form.param == "n_rows":
        args[0] = value
        plain["rows"] = form.plain
    elif form.param == "n_cols":
        args[1] = value
        plain["cols"] = form.plain
    else:
        kwargs[form.param] = value
        if form.param == "batch_shape":
            plain["batch"] = form.plain
        elif form.param == "k":
            plain["k"] = form.plain
        elif form.param == "dtype":
            plain["dtype"] = form.plain
            if form.plain is None:
                plain["dtype"] = (
                    table.default_dtype(lib) if entry == "eye" else "float32"
                )
    if mode.wrap == "subclass":
        args = [a.view(_Sub) if type(a) is np.ndarray else a for a in args]
        if type(kwargs.get("out")) is np.ndarray:
            kwargs["out"] = kwargs["out"].view(_Sub)
    if mode.wrap == "jax_mesh":
        args = [table.mesh_sharded(a) for a in args]
    if mode.wrap in _TORCH_SUBCLASS:
        # x, and an out of the "fresh" form (the others are kinds of their own).
        args = [_torch_subclass(mode, a, -1) for a in args]
        if form.name == "fresh" and kwargs.get("out") is not None:
            kwargs["out"] = _torch_subclass(mode, kwargs["out"], 0)
    return args, kwargs, plain


_TORCH_SUBCLASS = ("dtensor", "torch_subclass")


def _adapter_arguments(mode: table.Mode, entry: str, form: table.Form, lib: Any) -> Any:
    """An adapter's call, as `_arguments` makes `eye`'s: ONNX's ``x`` a
    matrix; OpenVINO's counts and index 0-d int32 arrays of the namespace
    (the result's), as in ``test_entry_points``."""
    on = {"device": lib.Device("device1")} if mode.wrap == "strict_device1" else {}
    plain: dict[str, Any] = {"batch": (), "k": table.K, "dtype": "float32"}
    plain |= {"rows": table.ROWS, "cols": table.COLS}
    args: list[Any] = []
    if entry == "onnx":
        args = [lib.zeros((table.ROWS, table.COLS), dtype=lib.float32, **on)]
        kwargs: dict[str, Any] = {"k": table.K}
    else:
        kwargs = {
            "num_rows": lib.asarray(table.ROWS, dtype=lib.int32, **on),
            "num_columns": table.COLS,
            "diagonal_index": lib.asarray(table.K, dtype=lib.int32, **on),
            "batch_shape": list(table.BATCH),
            "output_type": "f32",
        }
        plain["batch"] = table.BATCH
    value = form.make(lib)
    if on and type(value).__module__.startswith("array_api_strict"):
        value = lib.asarray(value, **on)
    kwargs[form.param] = value
    name = {"num_rows": "rows", "num_columns": "cols", "batch_shape": "batch"}
    name |= {"diagonal_index": "k", "output_type": "dtype"}
    plain[name.get(form.param, form.param)] = form.plain
    plain["batch"] = tuple(plain["batch"] or ())
    plain["dtype"] = plain["dtype"] or "float32"  # (ONNX's None: x's)
    if mode.wrap == "subclass":
        args = [a.view(_Sub) for a in args]
    if mode.wrap in _TORCH_SUBCLASS:
        args = [_torch_subclass(mode, a, -1) for a in args]
    return args, kwargs, plain


def _torch_subclass(mode: table.Mode, value: Any, dim: int) -> Any:
    """A plain tensor as the mode's subclass (a DTensor sharded on ``dim``)."""
    import torch

    if type(value) is not torch.Tensor or value.ndim < 2:  # (a 0-d count stays)
        return value
    if mode.wrap == "torch_subclass":
        from helpers.torch_subclasses import Wrapped

        return Wrapped(value)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Shard

    mesh = init_device_mesh("cpu", (1,))  # (the mode's one rank)
    return DTensor.from_local(value, mesh, [Shard(dim % value.ndim)])


def _values(result: Any) -> Any:
    """A result's values on the host (a wrapper subclass: its inner tensor's)."""
    result = getattr(result, "wrapped", result)
    return np.asarray(eyelike._backends.backend_of_array(result).to_numpy(result))


def _split_tensors(values: list[Any], is_input: Callable[[Any], bool]) -> Any:
    """The arrays among ``values`` to pass as inputs, and a rebuilder."""
    inputs = [v for v in values if is_input(v)]

    def rebuild(arrays: tuple[Any, ...]) -> list[Any]:
        it = iter(arrays)
        return [next(it) if is_input(v) else v for v in values]

    return inputs, rebuild


def _run(
    mode: table.Mode,
    call: Callable[..., Any],
    args: list[Any],
    kwargs: Any,
    dask_client: Any,
    shape: tuple[int, ...],
) -> Any:
    """Run ``call(*args, **kwargs)`` in ``mode``; the result as computed
    (``shape``: the result's, for the gradient modes' weights)."""
    wrap = mode.wrap
    names = list(kwargs)
    values = [*args, *kwargs.values()]
    n_args = len(args)

    def apply(vals: list[Any]) -> Any:
        return call(*vals[:n_args], **dict(zip(names, vals[n_args:], strict=True)))

    if wrap in (None, "subclass", "strict_device1", *_TORCH_SUBCLASS):
        result = apply(values)
        return result.compute() if mode.lib == "dask" else result
    if wrap == "distributed":
        return dask_client.compute(apply(values)).result()
    if mode.lib == "torch":
        import torch

        inputs, rebuild = _split_tensors(values, lambda v: isinstance(v, torch.Tensor))
        if wrap == "compile":
            torch._dynamo.reset()
            compiled = torch.compile(
                lambda *ts: apply(rebuild(ts)),
                fullgraph=True,
                backend="eager",
                dynamic=mode.extra["dynamic"],
            )
            return compiled(*inputs)
        if wrap == "export":

            class Module(torch.nn.Module):
                def forward(self, *ts: Any) -> Any:
                    return apply(rebuild(ts))

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                program = torch.export.export(
                    Module(), tuple(inputs), strict=mode.extra["strict"]
                )
                return program.module()(*inputs)
        if wrap == "torch_vmap":
            return torch.func.vmap(lambda t: apply(values))(torch.zeros(2))[1]
        if wrap == "torch_grad":
            w = torch.ones(shape, dtype=torch.float64)
            return torch.func.grad(lambda w: (w * apply(values).to(w.dtype)).sum())(w)
    if mode.lib == "jax":
        import jax
        import jax.export  # (a submodule older JAX does not import)
        import jax.numpy as jnp

        inputs, rebuild = _split_tensors(values, lambda v: isinstance(v, jax.Array))
        if wrap in ("jit", "jax_mesh"):
            return jax.jit(lambda *ts: apply(rebuild(ts)))(*inputs)
        if wrap == "jax_vmap":
            return jax.vmap(lambda t: apply(values))(jnp.zeros(2))[1]
        if wrap == "jax_grad":
            w = jnp.ones(shape, dtype=jnp.float32)
            return jax.grad(lambda w: (w * apply(values).astype(w.dtype)).sum())(w)
        if wrap == "eval_shape":
            return jax.eval_shape(lambda *ts: apply(rebuild(ts)), *inputs)
        if wrap == "lower":
            lowered = jax.jit(lambda *ts: apply(rebuild(ts))).lower(*inputs)
            return lowered.out_info
        if wrap == "jax_export":
            exported = jax.export.export(jax.jit(lambda *ts: apply(rebuild(ts))))(
                *inputs
            )
            return exported.call(*inputs)
    raise AssertionError(wrap)


def _error_chain(exc: BaseException) -> list[BaseException]:
    chain = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _snapshot(value: Any) -> Any:
    if value is None or not hasattr(value, "shape"):
        return None
    try:
        return np.array(_values(value))
    except Exception:  # a fake or meta tensor: no values to keep
        return None


def _expected_device(
    mode: table.Mode,
    lib: Any,
    entry: str,
    form: table.Form,
    kwargs: Any,
    args: list[Any],
    shape: tuple[int, ...],
) -> Any:
    if mode.name == "meta device":
        return "cpu" if form.name == "a name" else "meta"
    if mode.wrap == "jax_mesh":  # (a sharding: zeros_like's of x, under jit)
        import jax

        like = args[0] if entry == "eye_like" else None
        ref = lib.zeros(shape if like is None else like.shape, dtype=lib.float32)
        return jax.jit(lib.zeros_like)(ref if like is None else like).sharding
    if mode.wrap == "strict_device1":
        if entry == "eye" and form.param == "device":
            return table.default_device(lib) if form.name == "None" else None
        return lib.Device("device1")
    return table.default_device(lib)


def _device_of(result: Any) -> Any:
    """The result's device (an array with none, as mlx's: its namespace's
    default, which eyelike asked for)."""
    from array_api_compat import device

    if not hasattr(result, "device"):
        return table.default_device(array_namespace(result))
    return device(result)


def _check_cell(
    mode: table.Mode, entry: str, form: table.Form, dask_client: Any
) -> None:
    lib = _lib(mode.lib)
    context = mode.context() if mode.context else contextlib.nullcontext()
    call = _CALLS[entry]
    adapter = entry in _ADAPTERS
    param = f"{entry}.{form.param}" if adapter else form.param
    refused = table.refusal(mode.lib, mode.name, param, form.name)
    with context:
        if adapter:
            args, kwargs, plain = _adapter_arguments(mode, entry, form, lib)
        else:
            args, kwargs, plain = _arguments(mode, entry, form, lib)
        out = kwargs.get("out")
        before = _snapshot(out)
        shape = (*plain["batch"], plain["rows"], plain["cols"])
        like = "eye_like" if entry == "onnx" else entry
        want_device = _expected_device(mode, lib, like, form, kwargs, args, shape)
        if refused is not None:
            with pytest.raises(Exception) as info:
                _run(mode, call, args, kwargs, dask_client, shape)
            # (Under fullgraph, Dynamo reports the exception it observed
            # as "raised exception ValueError('...')" in its own.)
            observed = f"raised exception {refused.exc.__name__}("
            found = [
                e
                for e in _error_chain(info.value)
                if (isinstance(e, refused.exc) or observed in str(e))
                and refused.words in str(e)
            ]
            assert found, f"not the listed refusal: {info.value!r}"
            after = _snapshot(out)
            if before is not None:
                np.testing.assert_array_equal(after, before)
            return
        result = _run(mode, call, args, kwargs, dask_client, shape)
    want = reference(tuple(plain["batch"]), plain["rows"], plain["cols"], plain["k"])
    assert tuple(result.shape) == want.shape
    grad = mode.wrap in ("torch_grad", "jax_grad")  # a float gradient
    if not grad:
        assert dtype_name(result.dtype) == plain["dtype"], result.dtype
    if out is not None and mode.wrap in (
        None,
        "subclass",
        "strict_device1",
        *_TORCH_SUBCLASS,
    ):
        assert result is out
    if mode.wrap in (*_TORCH_SUBCLASS, "subclass") and (
        entry in ("eye_like", "onnx") or form.name == "fresh"
    ):
        # The subclass as the library's own zeros_like keeps it.
        of = args[0] if out is None else out
        assert type(result) is type(of), type(result)
    if mode.values:
        got = _values(result)
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
        if want_device is not None and mode.lib != "dask" and not grad:
            assert str(_device_of(result)) == str(want_device)
    elif mode.name == "meta device":
        assert str(result.device) == str(want_device)


@pytest.mark.parametrize(("mode", "entry", "form"), _cells())
def test_cell(mode: table.Mode, entry: str, form: table.Form, dask_client: Any) -> None:
    _check_cell(mode, entry, form, dask_client)


@pytest.mark.parametrize(("mode", "entry", "form"), _adapter_cells())
def test_adapter_cell(
    mode: table.Mode, entry: str, form: table.Form, dask_client: Any
) -> None:
    _check_cell(mode, entry, form, dask_client)


def test_every_listed_refusal_and_gap_is_a_cell() -> None:
    """A refusal or gap the tables list names modes and forms that exist."""
    modes = {(m.lib, m.name) for m in table.MODES} | {(lib, "*") for lib in table.LIBS}
    forms = {(f.param, f.name) for f in table.FORMS}
    for entry, adapter_forms in _ADAPTERS.items():
        forms |= {(f"{entry}.{f.param}", f.name) for f in adapter_forms}
        forms |= {(f"{entry}.*", f.name) for f in adapter_forms}
    listed = [(r.lib, r.modes, (r.param,), r.forms) for r in table.REFUSALS]
    listed += [(lib, ms, ps, fs) for lib, ms, ps, fs, _ in table.KNOWN_GAPS]
    for lib, mode_names, params, form_names in listed:
        for mode in mode_names:
            assert (lib, mode) in modes, (lib, mode)
        for form in form_names:
            assert form == "*" or any((p, form) in forms for p in params), form


def test_docs_show_the_tables() -> None:
    """docs/guide/conformance.rst holds the tables as the tests run them."""
    page = (ROOT / "docs" / "guide" / "conformance.rst").read_text()
    rendered = table.render()
    assert rendered in page, (
        "docs/guide/conformance.rst is out of date: paste in the output of "
        'python -c \'import sys; sys.path[:0] = ["tests"]; '
        "from helpers.matrix import render; print(render())'"
    )


# (CuPy's only with a device: a skip inside a hypothesis test skips it all.)
_EAGER = [
    m
    for m in table.MODES
    if m.name in ("eager", "default flags") and (m.lib != "cupy" or HAS_GPU)
]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_forms_combined_eagerly(data: Any) -> None:
    """One form for every parameter at once, in each namespace's eager mode:
    the oracle's values, or the refusal the combination calls for (a k or
    an out that does not fit the batch, an out of another dtype)."""
    mode = data.draw(st.sampled_from(_EAGER))
    lib = _lib(mode.lib)
    chosen = {
        param: data.draw(
            st.sampled_from(
                [f for f in table.forms_for(mode.lib, "eye") if f.param == param]
            )
        )
        for param in table.PARAMS
    }
    if any(
        table.refusal(mode.lib, mode.name, f.param, f.name) for f in chosen.values()
    ):
        return  # each refusal is a cell of its own
    rows = chosen["n_rows"].plain
    cols = chosen["n_cols"].plain
    batch = tuple(chosen["batch_shape"].plain)
    k = chosen["k"].plain
    dtype = chosen["dtype"].plain or table.default_dtype(lib)
    out = chosen["out"].make(lib)
    kwargs = {
        "batch_shape": chosen["batch_shape"].make(lib),
        "k": chosen["k"].make(lib),
        "dtype": chosen["dtype"].make(lib),
        "device": chosen["device"].make(lib),
        "xp": lib,
        "out": out,
    }
    call = lambda: eyelike.eye(  # noqa: E731
        chosen["n_rows"].make(lib), chosen["n_cols"].make(lib), **kwargs
    )
    k_shape = np.shape(np.asarray(k, dtype=object))
    fits = len(k_shape) <= len(batch) and all(
        s in (1, b) for s, b in zip(k_shape[::-1], batch[::-1], strict=False)
    )
    if not fits:
        with pytest.raises(ValueError, match="k"):
            call()
        return
    if out is not None and (batch, rows, cols) != (table.BATCH, table.ROWS, table.COLS):
        with pytest.raises(ValueError, match="out"):
            call()
        return
    if out is not None and chosen["dtype"].plain not in (None, "float32"):
        with pytest.raises(TypeError, match="out"):
            call()
        return
    if out is not None:
        dtype = "float32"
    result = call()
    want = reference(batch, rows, cols, k)
    assert tuple(result.shape) == want.shape
    assert dtype_name(result.dtype) == dtype
    got = np.asarray(eyelike._backends.backend_of_array(result).to_numpy(result))
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
