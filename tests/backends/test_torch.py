"""PyTorch-only behaviour: tensors without values (meta, FakeTensorMode),
torch's device rule (`TorchBackend.device`: what names a torch device, an
index past the CUDA count; an ``out`` on a device of a type; where no CUDA
device is usable: ``test_no_gpu.py``) and its dtype rule's default.

Each test says in its docstring which bug it targets, or which rule it holds.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import eyelike

torch = pytest.importorskip("torch")


def test_per_matrix_k_on_meta_tensors() -> None:
    """Bug: per-matrix k on a meta tensor raised torch's "cannot
    repeat_interleave a meta tensor without output_size" (shape-only tensors
    are how torch plans memory); scalar k already worked."""
    x = torch.zeros(2, 3, 3, device="meta")
    for k in (torch.tensor([0, 1]), [0, 1], torch.tensor([0, 1], device="meta")):
        got = eyelike.eye_like(x, k=k)
        assert got.is_meta
        assert (got.shape, got.dtype) == (x.shape, x.dtype)
    got = eyelike.eye(3, 4, batch_shape=2, k=[1, -1], xp=torch, device="meta")
    assert got.is_meta
    assert got.shape == (2, 3, 4)


def test_per_matrix_k_under_fake_tensor_mode() -> None:
    """Bug: per-matrix k under FakeTensorMode raised
    DynamicOutputShapeException (the index path's data-dependent size)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.zeros(4, 3, 5, dtype=torch.float16)
        k = torch.tensor([0, 1, -1, 2])
        got = eyelike.eye_like(x, k=k)
        assert (got.shape, got.dtype) == (x.shape, x.dtype)
        got = eyelike.eye(3, batch_shape=4, k=k, xp=torch)
        assert got.shape == (4, 3, 3)


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="needs a machine where CUDA is not usable"
)
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "torch.device('cuda')"])
@pytest.mark.parametrize("dtype", [None, "float32", "int64"])
def test_fake_cuda_tensor_proves_no_cuda(device: str, dtype: str | None) -> None:
    """The short path takes a tensor made on CUDA as proof that CUDA works,
    but only a plain eager tensor: a FakeTensorMode makes CUDA tensors on a
    machine without CUDA, and such a call is refused naming the device, as
    the general path refuses it, never returned as made."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    dev = torch.device("cuda") if device.startswith("torch") else device
    with FakeTensorMode(), pytest.raises(ValueError, match="no usable CUDA device"):
        eyelike.eye(3, xp=torch, device=dev, dtype=dtype)


def test_per_matrix_k_values_unchanged_on_real_tensors() -> None:
    """The mask path taken for shape-only tensors must not change the
    values of real ones (the index path)."""
    k = torch.tensor([0, 1, -1, 5])
    got = eyelike.eye(3, 4, batch_shape=4, k=k, xp=torch)
    rows = torch.arange(3)[:, None]
    cols = torch.arange(4)[None, :]
    want = (cols - rows == k[:, None, None]).to(got.dtype)
    assert torch.equal(got, want)


def test_a_first_per_matrix_call_imports_nothing_the_idiom_does_not() -> None:
    """Bug: the first per-matrix call in a fresh process cost 0.3-0.5 s:
    the index build's ``torch.unravel_index`` imported sympy, which every
    spawned DataLoader worker paid. Now it imports no module that torch's
    own mask idiom does not, at each build's size (mask, ``put_``)."""
    code = (
        "import sys, torch, eyelike\n"
        "k = torch.tensor([0, 1, -1])\n"
        "a = torch.arange(40)\n"
        "((a[None, :] - a[:, None])[None] == k[:, None, None]).to(torch.float32)\n"
        "idiom = set(sys.modules)\n"
        "eyelike.eye(3, k=k, batch_shape=3, xp=torch)\n"
        "eyelike.eye(40, k=k, batch_shape=3, xp=torch)\n"
        "eyelike.eye_like(torch.empty(3, 40, 40), k=k)\n"
        "print(sorted(set(sys.modules) - idiom))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "sympy" not in done.stdout
    assert done.stdout.splitlines()[-1] == "[]"


def test_a_device_of_a_type_only_takes_an_out_of_that_type() -> None:
    """torch.device("cuda") means the current CUDA device, whichever it is:
    an out on any CUDA device satisfies it, where "cuda:0" wants cuda:0.
    (A stand-in out on "cuda:1": no GPU needed to check the rule.)"""
    from types import SimpleNamespace

    from eyelike._backends import backend_of_namespace

    backend = backend_of_namespace(torch)
    out = SimpleNamespace(
        shape=(2, 2),
        dtype=torch.float32,
        requires_grad=False,
        is_nested=False,
        layout=torch.strided,
        is_inference=lambda: False,
        stride=lambda: (2, 1),
        is_contiguous=lambda: True,
        device=torch.device("cuda", 1),
    )
    from eyelike._pipeline import _check_out

    _check_out(backend, out, (2, 2), torch.float32, torch.device("cuda"))
    for other in (torch.device("cuda", 0), torch.device("cpu"), torch.device("meta")):
        with pytest.raises(ValueError, match="out is on device cuda:1; device "):
            _check_out(backend, out, (2, 2), torch.float32, other)


def test_torch_bad_device() -> None:
    """The device rule: what ``torch.device`` cannot read is a
    ``ValueError`` naming the parameter."""
    with pytest.raises(ValueError, match="device"):
        eyelike.eye(2, xp=torch, device="nonsense")


def test_torch_device_index_past_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cuda:7`` on a one-GPU machine: refused naming it, not torch's
    "invalid device ordinal" once allocating."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    for device in ("cuda:7", torch.device("cuda", 1)):
        with pytest.raises(
            ValueError, match=r"this machine has 1 CUDA device \(cuda:0"
        ):
            eyelike.eye(3, xp=torch, device=device)


def test_torch_default_dtype_is_read_on_every_call() -> None:
    """The dtype rule's default is torch's at each call."""
    # Regression: the default was cached, so torch.set_default_dtype was
    # ignored after the first call. Both paths, then the general one again.
    before = torch.get_default_dtype()
    try:
        for want in (torch.float64, torch.float32, torch.float64):
            torch.set_default_dtype(want)
            assert eyelike.eye(2, xp=torch).dtype == want
            assert eyelike.eye(2, xp=torch, device="cpu").dtype == want  # general
    finally:
        torch.set_default_dtype(before)


@pytest.mark.parametrize("batch", [(2,), (1,), (2, 2)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int16, torch.bool])
def test_per_matrix_k_under_vmap_and_broadcast(
    batch: tuple[int, ...], dtype: torch.dtype
) -> None:
    """One offset per matrix, written by the comparison straight into the
    result: under ``torch.func.vmap`` over ``k`` (each row its own offsets)
    and with ``k`` broadcast over the batch, each matrix is ``torch.diag``'s
    of its own offset."""
    ks = torch.tensor([[0, 1], [1, -1], [2, -3]])
    if batch == (1,):
        ks = ks[:, :1]
    made = torch.func.vmap(
        lambda k: eyelike.eye(3, k=k, batch_shape=batch, dtype=dtype, xp=torch)
    )(ks)
    for row, k in zip(made, ks, strict=True):
        for m, v in zip(
            row.reshape(-1, 3, 3), k.expand(batch).reshape(-1), strict=True
        ):
            want = torch.diag(torch.ones(max(0, 3 - abs(int(v)))), int(v))
            assert torch.equal(m, want.to(dtype))


@pytest.mark.parametrize("with_out", [False, True])
def test_batches_on_cuda_are_written_in_place(
    monkeypatch: pytest.MonkeyPatch, with_out: bool
) -> None:
    """The CUDA route of a batch (zeros, then the diagonal in place: on an
    H200, 0.76 of eye + expand + clone's time), taken here on the CPU: every
    offset, inside and past the matrix, with and without ``out``."""
    import numpy as np
    from helpers import reference

    from eyelike._backends.torch import build

    taken = []
    monkeypatch.setattr(
        build, "_on_cuda", lambda torch, device, out: not taken.append(1)
    )
    monkeypatch.setattr(build, "_CUDA_IN_PLACE", 0)
    for k in range(-4, 6):
        out = torch.full((2, 3, 4), 7.0) if with_out else None
        got = build.scalar_k(torch, (2, 3, 4), k, torch.float32, None, out)
        assert got is out or out is None
        np.testing.assert_array_equal(got.numpy(), reference((2,), 3, 4, k))
    assert len(taken) == 10


def _torch_dtypes() -> list[str]:
    """Every dtype eyelike makes on torch (its table, less those refused)."""
    from eyelike._backends.torch import TORCH

    names = []
    for name in TORCH._dtype_table(None):
        try:
            TORCH.dtype(name, None)
        except eyelike.DTypeError:
            continue
        names.append(name)
    return names


# The per-matrix builds: the small mask, the mask of narrow matrices, and
# zeros then one put_ a row (`build.per_matrix`).
_PER_MATRIX_SHAPES = {"small": (4, 5, 5), "narrow": (600, 8, 8), "put": (129, 16, 16)}


@pytest.fixture
def deterministic(request: pytest.FixtureRequest) -> Iterator[None]:
    """torch.use_deterministic_algorithms(True) where the test's ``mode``
    says so, restored after."""
    if "deterministic" not in request.node.callspec.params.get("mode", ""):
        yield
        return
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(False)


_MODES = ["fresh", "out", "vmap over out", "deterministic fresh", "deterministic out"]


@pytest.mark.usefixtures("deterministic")
@pytest.mark.parametrize("mode", _MODES)
@pytest.mark.parametrize("build", list(_PER_MATRIX_SHAPES))
@pytest.mark.parametrize("name", _torch_dtypes())
def test_per_matrix_k_in_every_dtype_on_every_build(
    name: str, build: str, mode: str
) -> None:
    """Bugs (a black-box review of issue 44's third round): a float8 output
    of more than 32,768 elements in matrices at least 16 wide failed in
    torch's put_ (no float8 kernel) after out was zeroed; and a vmapped out
    took put_, which has no batching rule: torch warned, and under warnings
    as errors the call failed with out written. And (a review of the
    training stack) under torch.use_deterministic_algorithms(True) put_,
    which has no deterministic kernel, raised torch's error, an out zeroed.
    Every dtype, every build, fresh or out, eagerly, vmapped over out or
    deterministic: the eye, no warning."""
    from helpers import reference, to_numpy

    mode = mode.removeprefix("deterministic ")
    dtype = getattr(torch, name)
    shape = _PER_MATRIX_SHAPES[build]
    ks = [i % 5 - 2 for i in range(shape[0])]
    k = torch.tensor(ks)
    want = reference(shape[:1], *shape[1:], np.array(ks, dtype=object))
    if mode == "vmap over out":
        outs = torch.ones(2, *shape, dtype=dtype)
        made = torch.func.vmap(lambda o: eyelike.eye_like(o, k=k, out=o))(outs)
        want = np.broadcast_to(want, made.shape)
    else:
        out = torch.ones(shape, dtype=dtype) if mode == "out" else None
        made = eyelike.eye(
            *shape[1:], batch_shape=shape[:1], k=k, dtype=dtype, xp=torch, out=out
        )
        assert out is None or made is out
    assert made.dtype == dtype
    np.testing.assert_array_equal(to_numpy(made).astype(np.complex128), want)


def _layouts() -> dict[str, Any]:
    """A dense tensor as each layout torch has for values (None: that layout
    cannot hold a tensor of its rank)."""

    def nested(t: Any, layout: Any) -> Any:
        if t.ndim == 0:
            return None
        return torch.nested.nested_tensor(list(t.reshape(len(t), -1)), layout=layout)

    return {
        "sparse_coo": lambda t: t.to_sparse(),
        "sparse_csr": lambda t: t.to_sparse_csr() if t.ndim == 2 else None,
        "nested": lambda t: nested(t, torch.strided),
        "nested jagged": lambda t: nested(t, torch.jagged),
    }


# Each argument that takes a tensor: (the call given the tensor, its dense
# value, the parameter its refusal names, the eye of the dense value).
_TENSOR_ARGUMENTS: dict[str, Any] = {
    "n_rows": (lambda t: eyelike.eye(t, 2, xp=torch), torch.tensor(3), "n_rows"),
    "batch_shape": (
        lambda t: eyelike.eye(2, batch_shape=t, xp=torch),
        torch.tensor([2, 1]),
        "batch_shape",
    ),
    "k": (
        lambda t: eyelike.eye(3, batch_shape=(2, 2), k=t, xp=torch),
        torch.tensor([[1, 0], [-1, 2]]),
        "k",
    ),
    "eye_like x": (lambda t: eyelike.eye_like(t), torch.zeros(2, 3), "x"),
    "eye_like k": (
        lambda t: eyelike.eye_like(torch.zeros(2, 3, 3), k=t),
        torch.tensor([1, -1]),
        "k",
    ),
    "onnx x": (lambda t: eyelike.onnx.eye_like(t), torch.zeros(2, 3), "x"),
    "openvino num_rows": (
        lambda t: eyelike.openvino.eye(t, 2, 0, output_type="f32"),
        torch.tensor(3, dtype=torch.int32),
        "num_rows",
    ),
    "openvino diagonal_index": (
        lambda t: eyelike.openvino.eye(3, 3, t, output_type="f32"),
        torch.tensor(1, dtype=torch.int32),
        "diagonal_index",
    ),
    "openvino batch_shape": (
        lambda t: eyelike.openvino.eye(2, 2, 0, t, output_type="f32"),
        torch.tensor([2, 1], dtype=torch.int32),
        "batch_shape",
    ),
}


@pytest.mark.parametrize("layout", list(_layouts()))
@pytest.mark.parametrize("argument", list(_TENSOR_ARGUMENTS))
def test_a_tensor_of_every_layout_in_every_argument(argument: str, layout: str) -> None:
    """Bugs (a black-box review of issue 44's third round): a sparse or
    nested tensor as k, a count, a batch shape, x of onnx.eye_like or an
    input of openvino.eye raised torch's raw errors ("Could not run
    'aten::clamp' with arguments from the 'SparseCPU' backend", "Internal
    error: NestedTensorImpl doesn't support sizes"). Each is the eye of its
    values (a sparse k, a sparse count) or a TypeError or ValueError naming
    the parameter."""
    call, dense, name = _TENSOR_ARGUMENTS[argument]
    with warnings.catch_warnings():  # (torch's: its CSR tensors are in beta)
        warnings.simplefilter("ignore")
        value = _layouts()[layout](dense)
    if value is None:
        pytest.skip(f"{layout} holds no tensor of rank {dense.ndim}")
    refusal = None
    try:
        made = call(value)
    except (TypeError, ValueError) as exc:
        refusal = str(exc)
    if refusal is not None:
        assert refusal.startswith(name), refusal
    else:
        torch.testing.assert_close(made, call(dense), rtol=0, atol=0)


def test_openvino_inputs_of_every_tensor_kind() -> None:
    """Regressions (a review of this round): openvino.eye handed an array
    diagonal_index to eye as an array k, which a DTensor or a strict
    dispatch subclass cannot meet (torch's "got mixed torch.Tensor and
    DTensor"), and a wrapper subclass's class reached the result; its
    batch_shape, read by eye's rule, refused a DTensor, a sparse tensor and
    a wrapper subclass, whose tolist torch refuses. Each is read as its
    values: the eye, a plain tensor."""
    from helpers.torch_subclasses import Strict, Wrapped, rank_of
    from torch.distributed.tensor import Replicate, distribute_tensor

    k, dims = (
        torch.tensor(1, dtype=torch.int32),
        torch.tensor([2, 1], dtype=torch.int32),
    )
    want = eyelike.eye(2, 3, k=1, batch_shape=(2, 1), xp=torch)
    with rank_of(1, 0, (1,)) as mesh:
        kinds = [
            lambda t: distribute_tensor(t.reshape(-1), mesh, [Replicate()]),
            lambda t: t.to_sparse(),
            Wrapped,
            Strict,
        ]
        for kind in kinds:
            made = eyelike.openvino.eye(2, 3, kind(k), dims, output_type="f32")
            assert type(made) is torch.Tensor
            assert torch.equal(made, want)
            if kind is not Strict:  # (a sequence of it: its entries)
                made = eyelike.openvino.eye(2, 3, k, kind(dims), output_type="f32")
                assert torch.equal(made, want)
