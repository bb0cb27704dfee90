"""Third-party Array API namespaces eyelike has no module for, through the
generic path: what the result holds is what the namespace would hold (a
sparse result stays sparse, a lazy one lazy, run here in ONNX Runtime), the
memory rule counts what the result will hold, and what a namespace lacks
is refused before anything is built, naming it.

These libraries are installed by the ``namespaces`` session only (its
pinned set, ``requirements/namespaces.txt``); elsewhere each test skips.

Bug (issue 37): a per-matrix ``k`` on pydata sparse raised ``AttributeError:
module 'sparse' has no attribute 'arange'`` from inside the build, and an
``out=`` COO ``TypeError: 'COO' object does not support item assignment``
after the eye was built; a 32 GiB eye of a host namespace failed with
NumPy's raw ``MemoryError`` from inside the build.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import types
from typing import Any

import numpy as np
import pytest
from helpers import reference

import eyelike
from eyelike._validate import size


def test_sparse_results_stay_sparse_and_store_only_the_ones() -> None:
    sparse = pytest.importorskip("sparse")
    for k in (1, [0, 1, -1], np.array([[2], [-1]])):
        batch = (*np.shape(k)[:-1], 3) if np.ndim(k) == 2 else (3,)
        got = eyelike.eye(4, 5, batch_shape=batch, k=k, xp=sparse)
        want = reference(batch, 4, 5, k if isinstance(k, int) else np.asarray(k))
        assert isinstance(got, sparse.SparseArray)
        assert got.nnz == np.count_nonzero(want)
        np.testing.assert_array_equal(got.todense(), want)
    x = sparse.zeros((2, 3, 3))
    got = eyelike.eye_like(x, k=sparse.asarray(np.array([0, -1])))
    assert isinstance(got, sparse.SparseArray)
    np.testing.assert_array_equal(got.todense(), reference((2,), 3, 3, [0, -1]))
    # A dtype the namespace has by name and calls numeric, which its
    # inspection API does not list.
    assert eyelike.eye(2, dtype="float16", xp=sparse).dtype == sparse.float16


def test_memory_counts_what_the_result_holds(monkeypatch: Any) -> None:
    """A sparse eye of 10**5 x 10**5 stores 10**5 ones; a dense one on the
    host is refused before anything is built."""
    sparse = pytest.importorskip("sparse")
    monkeypatch.setattr(size, "physical_memory", lambda: 64 << 20)
    got = eyelike.eye(100_000, xp=sparse)  # 80 GB dense; 2.4 MB stored
    assert got.nnz == 100_000
    marray = pytest.importorskip("marray")
    masked = marray.masked_namespace(np)
    with pytest.raises(MemoryError, match="100000"):
        eyelike.eye(100_000, xp=masked)
    # Bug (a review of issue 44's third round): ndonnx computes the values
    # of constants on the host (no DLPack), and eyelike judged none: the
    # eye reached NumPy's own allocation.
    ndonnx = pytest.importorskip("ndonnx")
    with pytest.raises(MemoryError, match="more than this machine's"):
        eyelike.eye(100_000, xp=ndonnx)


def test_out_without_item_assignment_is_refused_before_building() -> None:
    sparse = pytest.importorskip("sparse")
    out = sparse.zeros((2, 3, 3))
    with pytest.raises(TypeError, match="out: sparse arrays have no item assignment"):
        eyelike.eye(3, batch_shape=2, out=out)


def test_ndonnx_lazy_results_run_in_onnx_runtime() -> None:
    """A lazy array, and a lazy k: the model built and run in ONNX Runtime
    gives the eye."""
    ndx = pytest.importorskip("ndonnx")
    ort = pytest.importorskip("onnxruntime")
    x = ndx.argument(shape=(2, 3, 4), dtype=ndx.float32)
    k = ndx.argument(shape=(2,), dtype=ndx.int64)
    outputs = {
        "per_matrix": eyelike.eye_like(x, k=k),
        "scalar": eyelike.eye_like(x, k=-1),
        "fresh": eyelike.eye(3, 4, batch_shape=2, k=[1, 2**70], xp=ndx),
    }
    model = ndx.build({"x": x, "k": k}, outputs)
    session = ort.InferenceSession(model.SerializeToString())
    inputs = {"x": np.zeros((2, 3, 4), np.float32), "k": np.array([0, 2])}
    got = dict(zip(outputs, session.run(None, inputs), strict=True))
    np.testing.assert_array_equal(got["per_matrix"], reference((2,), 3, 4, [0, 2]))
    np.testing.assert_array_equal(got["scalar"], reference((2,), 3, 4, -1))
    np.testing.assert_array_equal(got["fresh"], reference((2,), 3, 4, [1, 2**70]))


def _namespace(**functions: Any) -> types.ModuleType:
    """A namespace of array-api-strict's functions, with some left out or
    replaced. (A namespace is known by the arrays its ``asarray`` makes: a
    test of the generic path's rules leaves ``asarray`` out, or this one is
    array-api-strict itself.)"""
    import array_api_strict as xp

    ns = types.ModuleType("thirdparty")
    for name in dir(xp):
        if not name.startswith("_") or name in (
            "__array_namespace_info__",
            "__array_api_version__",
        ):
            setattr(ns, name, getattr(xp, name))
    for name, value in functions.items():
        if value is None:
            delattr(ns, name)
        else:
            setattr(ns, name, value)
    return ns


def test_what_a_namespace_lacks_is_refused_naming_it() -> None:
    pytest.importorskip("array_api_strict")
    ns = _namespace(arange=None, stack=None, asarray=None)
    assert eyelike.eye(2, k=1, xp=ns).shape == (2, 2)  # one offset: eye
    with pytest.raises(TypeError, match=r"thirdparty\.arange, or stack"):
        eyelike.eye(2, batch_shape=2, k=[0, 1], xp=ns)


def test_a_function_that_fails_is_named_with_its_error_chained() -> None:
    pytest.importorskip("array_api_strict")

    def broken_eye(*args: Any, **kwargs: Any) -> Any:
        msg = "no eye today"
        raise ValueError(msg)

    ns = _namespace(eye=broken_eye, asarray=None)
    with pytest.raises(RuntimeError, match=r"thirdparty\.eye failed") as info:
        eyelike.eye(3, xp=ns)
    assert isinstance(info.value.__cause__, ValueError)


def test_every_function_the_build_calls_is_there_before_it_builds() -> None:
    """Bug (issue 45): a namespace without broadcast_to (or asarray) was
    refused only after its eye had built the matrix."""
    pytest.importorskip("array_api_strict")
    import array_api_strict as xp

    calls: list[Any] = []

    def counted_eye(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return xp.eye(*args, **kwargs)

    ns = _namespace(eye=counted_eye, asarray=None, broadcast_to=None)
    with pytest.raises(TypeError, match=r"thirdparty has no broadcast_to or asarray"):
        eyelike.eye(2, batch_shape=3, k=1, xp=ns)
    with pytest.raises(TypeError, match=r"thirdparty has no asarray"):
        eyelike.eye(2, batch_shape=2, k=[0, 1], xp=_namespace(asarray=None))
    with pytest.raises(TypeError, match=r"thirdparty has no zeros\b"):
        eyelike.eye(0, batch_shape=3, xp=_namespace(asarray=None, zeros=None))
    assert calls == []
    assert eyelike.eye(2, k=1, xp=ns).shape == (2, 2)  # one matrix: eye alone
    assert len(calls) == 1


def test_a_lazy_batch_needs_arange_for_a_per_matrix_k() -> None:
    """A batch not known yet is built by the mask: without ``arange``, a
    per-matrix ``k`` (even of host values, which another build would
    stack) is refused naming it, before anything is built (a review of
    issue 45's change found it let through, to fail inside the build)."""
    pytest.importorskip("array_api_strict")
    from eyelike._backends.reference import needs

    ns = _namespace(arange=None, asarray=None)
    with pytest.raises(TypeError, match=r"k: thirdparty has no arange"):
        needs(ns, (None, 2, 2), np.array([0, 1]), None, lazy=True)
    needs(ns, (None, 2, 2), 1, None, lazy=True)  # one offset: its eye


def test_a_namespace_is_known_by_the_arrays_it_makes() -> None:
    """Bug (issue 45): marray's namespace over torch (a module named
    ``marray.array_api_compat.torch``) was taken for torch by its name: eye
    gave a plain tensor (no mask), eye_like of its array raised torch's
    AttributeError. A copy of array-api-strict's functions makes its arrays,
    and is it."""
    strict = pytest.importorskip("array_api_strict")
    from eyelike._backends import backend_of_namespace

    assert backend_of_namespace(_namespace()) is backend_of_namespace(strict)
    marray = pytest.importorskip("marray")
    libs = ["array_api_compat.numpy"]
    if importlib.util.find_spec("torch") is not None:
        libs.append("array_api_compat.torch")
    for lib in libs:
        xp = marray.masked_namespace(importlib.import_module(lib))
        got = eyelike.eye(2, batch_shape=2, k=[0, 1], xp=xp)
        assert type(got) is type(xp.asarray(0)), lib
        np.testing.assert_array_equal(
            np.asarray(got.data), reference((2,), 2, 2, [0, 1])
        )
        like = eyelike.eye_like(xp.asarray(np.zeros((2, 3, 4))), k=xp.asarray([0, -1]))
        assert type(like) is type(got), lib
        np.testing.assert_array_equal(
            np.asarray(like.data), reference((2,), 3, 4, [0, -1])
        )


def test_one_namespace_however_many_backends_were_made_for_it() -> None:
    """Bug (a review of issue 45's change): two threads meeting a namespace
    first each made a backend for it, one kept by array type and the other
    by name, and every later call with a k of its arrays was refused ("k is
    a marray.numpy array, but the result is made by marray.numpy"); two
    marray namespaces of one name did the same without threads."""
    marray = pytest.importorskip("marray")
    import threading
    import time

    import array_api_compat.numpy as anp

    xp = marray.masked_namespace(anp)
    k = xp.asarray([0, 1])
    made = xp.asarray

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.1)  # the registry's probe: both threads inside it
        return made(*args, **kwargs)

    xp.asarray = slow
    got: list[Any] = []
    threads = [
        threading.Thread(
            target=lambda: got.append(eyelike.eye(2, batch_shape=2, k=k, xp=xp))
        )
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    xp.asarray = made
    assert len(got) == 2
    other = marray.masked_namespace(anp)  # another module of the same name
    for namespace, offsets in ((xp, k), (other, other.asarray([1, 0])), (xp, k)):
        result = eyelike.eye(2, batch_shape=2, k=offsets, xp=namespace)
        want = reference((2,), 2, 2, list(np.asarray(offsets.data)))
        np.testing.assert_array_equal(np.asarray(result.data), want)


def test_a_namespace_s_own_dtype_spellings() -> None:
    """Bug (issue 45): pydata sparse's own eye test passes dtype="i4", which
    sparse takes, and eyelike refused it."""
    sparse = pytest.importorskip("sparse")
    got = eyelike.eye(3, k=1, dtype="i4", xp=sparse)
    assert got.dtype == np.dtype("i4")
    for spelling in ("?", "e", "f8", "long"):  # (its bool and float16: types)
        assert eyelike.eye(2, dtype=spelling, xp=sparse).dtype == np.dtype(spelling)
    np.testing.assert_array_equal(got.todense(), np.eye(3, k=1, dtype="i4"))
    with pytest.raises(eyelike.DTypeError, match="'i3'"):
        eyelike.eye(3, dtype="i3", xp=sparse)


def test_array_api_strict_at_every_api_version_with_eye() -> None:
    """Before 2023.12 it has no inspection API (asking raises): its dtypes
    by name, its one device, its defaults the standard's."""
    xp = pytest.importorskip("array_api_strict")
    # (2021.12 is served as 2022.12, with a warning.)
    for version in ("2022.12", "2023.12", "2024.12"):
        with xp.ArrayAPIStrictFlags(api_version=version):
            got = eyelike.eye(3, batch_shape=2, k=[0, 1], xp=xp)
            want = reference((2,), 3, 3, [0, 1])
            np.testing.assert_array_equal(np.asarray(got), want)
            like = eyelike.eye_like(xp.zeros((2, 3, 3), dtype=xp.int8), k=1)
            assert like.dtype == xp.int8
            assert got.dtype == xp.float64
            device = xp.asarray(0).device
            assert eyelike.eye(2, xp=xp, device=device).device == device


def test_ndonnx_unknown_batch_sizes_stay_unknown() -> None:
    """A lazy array whose batch size is not known yet (None, as the standard
    allows): its eye too, wherever its own zeros_like works. The matrix's
    sizes must be known (its rows and columns are built)."""
    ndx = pytest.importorskip("ndonnx")
    ort = pytest.importorskip("onnxruntime")
    x = ndx.argument(shape=(None, 3, 4), dtype=ndx.float32)
    k = ndx.argument(shape=(None,), dtype=ndx.int64)
    outputs = {
        "scalar": eyelike.eye_like(x, k=1),
        "lazy k": eyelike.eye_like(x, k=k),
        "host k": eyelike.eye_like(x, k=[2], dtype=ndx.int8),
    }
    assert all(v.shape == (None, 3, 4) for v in outputs.values())
    model = ndx.build({"x": x, "k": k}, outputs)
    session = ort.InferenceSession(model.SerializeToString())
    inputs = {"x": np.zeros((2, 3, 4), np.float32), "k": np.array([0, 2])}
    got = dict(zip(outputs, session.run(None, inputs), strict=True))
    np.testing.assert_array_equal(got["scalar"], reference((2,), 3, 4, 1))
    np.testing.assert_array_equal(got["lazy k"], reference((2,), 3, 4, [0, 2]))
    assert got["host k"].dtype == np.int8
    np.testing.assert_array_equal(got["host k"], reference((2,), 3, 4, 2))
    with pytest.raises(ValueError, match="x must have a known shape"):
        eyelike.eye_like(ndx.argument(shape=(2, None, 4), dtype=ndx.float32))


@pytest.mark.parametrize("name", ["sparse", "ndonnx", "marray"])
def test_a_device_is_one_the_namespace_lists_or_refused_by_name(name: str) -> None:
    """Bug (a review of issue 44's third round): the generic path passed any
    device on: ndonnx dropped one it has not ("cuda", 0, object()), and
    sparse and marray refused it in NumPy's words, naming no parameter. A
    device the namespace lists is taken; any other is a ValueError naming
    device, before anything is built."""
    module = pytest.importorskip(name)
    xp = module.masked_namespace(np) if name == "marray" else module
    info = xp.__array_namespace_info__()
    for device in info.devices():
        made = eyelike.eye(2, xp=xp, device=device)
        assert made.shape == (2, 2)
    for device in ("cuda", "cuda:7", 0, object(), 3.5):
        if any(device == d for d in info.devices()):
            continue
        with pytest.raises(ValueError, match="device"):
            eyelike.eye(2, xp=xp, device=device)


@pytest.mark.parametrize("name", ["sparse", "ndonnx"])
def test_a_dtype_named_not_listed_on_the_default_device_given(name: str) -> None:
    """Bug (a review of issue 44's third round): float16, which the
    namespace has and its inspection API does not list, was taken with no
    device but refused with its default device given (``device=x.device``,
    and ``eye_like``, which passes x's): a dtype's answer hung on the form
    of the device."""
    xp = pytest.importorskip(name)
    x = xp.zeros((2, 2), dtype=xp.float32)
    device = xp.__array_namespace_info__().default_device()
    for made in (
        eyelike.eye(2, xp=xp, dtype="float16"),
        eyelike.eye(2, xp=xp, device=device, dtype="float16"),
        eyelike.eye_like(x, dtype="float16"),
    ):
        assert made.dtype == xp.float16


def test_a_lazy_count_or_batch_shape_is_refused_by_name() -> None:
    """Bug (a review of issue 44's third round): a count or batch shape of
    ndonnx's lazy arrays (``ndx.argument``), for eye or openvino.eye, raised
    ndonnx's "no propagated value available", naming no parameter. A
    TypeError naming it, as a traced JAX count is."""
    ndx = pytest.importorskip("ndonnx")
    lazy = ndx.argument(shape=(), dtype=ndx.int32)
    dims = ndx.argument(shape=(2,), dtype=ndx.int32)
    calls = {
        "n_rows": lambda: eyelike.eye(lazy, 3, xp=ndx),
        "batch_shape": lambda: eyelike.eye(3, batch_shape=dims, xp=ndx),
        "num_rows": lambda: eyelike.openvino.eye(lazy, 3, 0, output_type="f32"),
        "batch_shape[0]": lambda: eyelike.openvino.eye(
            3, 3, 0, dims, output_type="f32"
        ),
    }
    for name, call in calls.items():
        with pytest.raises(TypeError, match=rf"^{re.escape(name)}"):
            call()
