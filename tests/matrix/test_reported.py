"""The misses a new user's hour found where two documented things meet,
each as it was reported (the matrix holds their classes). Each test failed
on the code before its fix."""

from __future__ import annotations

import subprocess
import sys
import threading
import warnings
from typing import Any

import numpy as np
import pytest

import eyelike
from eyelike._validate import dtypes as _dtypes
from eyelike._validate import offsets as _offsets

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("k", [0, [0, 1]])
def test_inference_tensor_out_is_refused_untouched(k: Any) -> None:
    """Bug: an out made under inference_mode, filled outside it, raised
    torch's RuntimeError after writing (a full identity; all zeros with a
    per-matrix k)."""
    with torch.inference_mode():
        out = torch.full((2, 3, 3), 7.0)
    with pytest.raises(ValueError, match="out is an inference tensor"):
        eyelike.eye(3, batch_shape=2, k=k, out=out)
    assert bool((out == 7).all())
    with torch.inference_mode():  # where torch lets it be written
        eyelike.eye(3, batch_shape=2, k=k, out=out)
    assert out.sum().item() == (6 if k == 0 else 5)


def test_parameter_out_is_filled_under_no_grad() -> None:
    """Bug: an nn.Parameter out was refused under no_grad, where autograd
    lets it be filled (torch.nn.init.eye_ does)."""
    weight = torch.nn.Parameter(torch.full((3, 3), 7.0))
    with pytest.raises(ValueError, match="requires grad"):
        eyelike.eye(3, out=weight)
    assert bool((weight == 7).all())
    with torch.no_grad():
        eyelike.eye(3, out=weight)
    assert torch.equal(weight.detach(), torch.eye(3))


def _warning_calls() -> list[Any]:
    import eyelike.onnx as onnx
    import eyelike.openvino as openvino

    x = torch.zeros(2, 2)
    n = torch.tensor(2)
    return [
        lambda: onnx.eye_like(x),
        lambda: openvino.eye(n, n, torch.tensor(0), output_type="f32"),
        lambda: eyelike.eye(2, dtype="f4"),
        lambda: eyelike.eye(2, dtype=np.float16),
    ]


def test_no_call_touches_the_warning_filters() -> None:
    """Bug: the dtype parser entered warnings.catch_warnings, which is not
    thread-safe: 8 threads left ('error', ..., DeprecationWarning) in the
    process-wide filters, so a later DeprecationWarning raised."""
    calls = _warning_calls()
    before = list(warnings.filters)
    interval = sys.getswitchinterval()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for i in range(300):
                if i % 50 == 0:
                    _dtypes._CACHE.clear()  # the first call with a spelling
                calls[i % len(calls)]()
        except BaseException as exc:  # reported below
            errors.append(exc)

    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    assert warnings.filters == before


def test_deprecated_spellings_are_refused_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for spelling in ("a", "a3", "<a2"):
            with pytest.raises(eyelike.DTypeError, match="dtype"):
                eyelike.eye(2, dtype=spelling)


# The forms reported to raise Unsupported in one graph, made inside it.
IN_A_GRAPH = {
    "batch list of sizes": lambda x: eyelike.eye(
        3, batch_shape=list(x.shape[:-2]), xp=torch
    ),
    "batch [2]": lambda x: eyelike.eye(3, batch_shape=[2], xp=torch),
    "k list": lambda x: eyelike.eye_like(x, k=[0, 1]),
    "k tuple": lambda x: eyelike.eye_like(x, k=(0, 1)),
    "k NumPy array": lambda x: eyelike.eye_like(x, k=np.array([0, 1])),
    "NumPy count": lambda x: eyelike.eye(np.int64(3), batch_shape=2, xp=torch),
    "NumPy k": lambda x: eyelike.eye_like(x, k=np.int64(1)),
    "NumPy dtype": lambda x: eyelike.eye_like(x, dtype=np.int8),
    # Tensors made inside the function are constants Dynamo reads.
    "count tensor": lambda x: eyelike.eye(torch.tensor(3), batch_shape=2, xp=torch),
    "batch tensor": lambda x: eyelike.eye(3, batch_shape=torch.tensor([2]), xp=torch),
}


@pytest.mark.parametrize("make", IN_A_GRAPH.values(), ids=IN_A_GRAPH.keys())
@pytest.mark.parametrize("dynamic", [False, True])
def test_forms_compile_in_one_graph(make: Any, dynamic: bool) -> None:
    """Bug: each raised Unsupported under torch.compile(fullgraph=True)."""
    torch._dynamo.reset()
    x = torch.zeros(2, 3, 3)
    compiled = torch.compile(
        lambda x: x + make(x), fullgraph=True, backend="eager", dynamic=dynamic
    )
    assert torch.equal(compiled(x), x + make(x))


@pytest.mark.parametrize("strict", [True, False])
def test_forms_export(strict: bool) -> None:
    """Bug: the same forms raised Unsupported under torch.export(strict=True)."""
    x = torch.zeros(2, 3, 3)
    for make in IN_A_GRAPH.values():

        class Module(torch.nn.Module):
            def forward(self, x: Any, make: Any = make) -> Any:
                return x + make(x)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's own notes while exporting
            program = torch.export.export(Module(), (x,), strict=strict)
        result = program.module()(x)
        assert type(result) is torch.Tensor
        assert torch.equal(result, x + make(x))


def test_tensor_count_is_a_symbolic_size_under_non_strict_export() -> None:
    """Found by the matrix: a 0-d tensor count under torch.export(strict=False)
    raised torch's 'Could not extract specialized integer'. It is now a size
    known when the program runs, as torch.eye takes it: the program is right
    for other counts, and refuses a negative one."""

    class Module(torch.nn.Module):
        def forward(self, n: Any) -> Any:
            return eyelike.eye(n, batch_shape=2, k=[0, 1], xp=torch)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(Module(), (torch.tensor(3),), strict=False)
    for n in (3, 5, 0):
        got = program.module()(torch.tensor(n))
        assert torch.equal(got, eyelike.eye(n, batch_shape=2, k=[0, 1], xp=torch))
    with pytest.raises(RuntimeError, match="u0 >= 0"):
        program.module()(torch.tensor(-1))


def test_a_count_without_a_value_under_fake_tensor_mode_is_refused_by_name() -> None:
    """A FakeTensorMode's tensor made without a value, or of a float or
    complex dtype, is no count: a TypeError naming n_rows, not torch's
    DataDependentOutputException (nor a float read as a count)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        for n in (
            torch.empty((), dtype=torch.int64),
            torch.tensor(3.0),
            torch.tensor(3 + 0j),
            torch.tensor([3, 3]),
        ):
            with pytest.raises(TypeError, match="n_rows must be a non-negative"):
                eyelike.eye(n, xp=torch)
        assert eyelike.eye(torch.tensor(3), xp=torch).shape == (3, 3)
        assert eyelike.eye(torch.tensor([3]), xp=torch).shape == (3, 3)  # as eagerly


def test_a_device_given_under_compile_compiles_once() -> None:
    """The short path with device= keeps no state that a compiled program's
    guards would read: four calls, one frame. In a fresh process, where no
    earlier call has run eyelike on torch."""
    script = """if True:
        import torch, eyelike
        from torch._dynamo.testing import CompileCounter
        counter = CompileCounter()
        compiled = torch.compile(
            lambda x: x + eyelike.eye(3, device=x.device, dtype=x.dtype, xp=torch),
            backend=counter, fullgraph=True,
        )
        for _ in range(4):
            assert torch.equal(compiled(torch.zeros(3, 3)), torch.eye(3))
        print(counter.frame_count)
    """
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1"], done.stdout


def test_an_int_batch_shape_past_int64_is_named_as_given() -> None:
    """The short path reads an int batch_shape as a tuple of one; the
    general path still names the caller's own."""
    with pytest.raises(ValueError, match=r"^batch_shape must be at most 2\*\*63 - 1"):
        eyelike.eye(3, batch_shape=2**63)


@pytest.mark.parametrize("dynamic", [False, True, None])
def test_closed_over_forms_under_compile(dynamic: bool | None) -> None:
    """Found by the matrix: a NumPy uint8 k and a range batch_shape, made
    outside the compiled function, raised Unsupported (the range only with
    dynamic=True)."""
    k, batch = np.uint8(1), range(2, 4)
    torch._dynamo.reset()
    compiled = torch.compile(
        lambda x: x + eyelike.eye(3, batch_shape=batch, k=k, xp=torch),
        fullgraph=True,
        backend="eager",
        dynamic=dynamic,
    )
    x = torch.zeros(2, 3, 3, 3)
    assert torch.equal(compiled(x), torch.from_numpy(np.eye(3, k=1, dtype="f4")) + x)


def test_bad_count_under_fullgraph_names_it() -> None:
    """Bug: eye(-1) under fullgraph reported that Dynamo cannot trace
    str.partition; now eyelike's error is what torch wraps."""
    torch._dynamo.reset()
    compiled = torch.compile(
        lambda x: x + eyelike.eye(-1, xp=torch), fullgraph=True, backend="eager"
    )
    with pytest.raises(Exception) as info:
        compiled(torch.zeros(1))
    chain: list[BaseException] = []
    current: BaseException | None = info.value
    while current is not None and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    assert any("n_rows must be non-negative" in str(e) for e in chain), chain


def test_shape_only_evaluation_allocates_nothing() -> None:
    """Bug: jax.eval_shape, jit(...).lower() and FakeTensorMode raised
    MemoryError for a 10**6 x 10**6 eye, though nothing is allocated."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    from torch._subclasses.fake_tensor import FakeTensorMode

    big = 10**6
    assert jax.eval_shape(lambda: eyelike.eye(big, xp=jnp)).shape == (big, big)
    assert jax.jit(lambda: eyelike.eye(big, xp=jnp)).lower().out_info.shape == (
        big,
        big,
    )
    with FakeTensorMode():
        assert eyelike.eye_like(torch.empty(big, big)).shape == (big, big)
    with pytest.raises(MemoryError):  # eagerly, memory is still checked
        eyelike.eye(big, xp=jnp)
    with pytest.raises(MemoryError):
        eyelike.eye(big, xp=torch)


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (
            lambda: eyelike.eye_like(
                torch.nested.nested_tensor(
                    [torch.zeros(3, 3), torch.zeros(4, 3)], layout=torch.jagged
                )
            ),
            ValueError,
            "x is a nested tensor",
        ),
        (
            lambda: eyelike.eye(
                3, batch_shape=2, k=torch.tensor([0, 1], device="meta"), xp=torch
            ),
            ValueError,
            "k is a meta tensor",
        ),
        (lambda: eyelike.eye(torch.tensor(3, device="meta")), TypeError, "n_rows"),
        (
            lambda: eyelike.eye(
                3, batch_shape=torch.tensor([2], device="meta"), xp=torch
            ),
            TypeError,
            "batch_shape",
        ),
        (
            lambda: eyelike.openvino.eye(
                torch.tensor(3, device="meta"), 3, 0, output_type="f32"
            ),
            TypeError,
            "num_rows",
        ),
        (
            lambda: eyelike.eye(3, out=torch.zeros(3, 3).to_sparse()),
            TypeError,
            "out must be a dense",
        ),
    ],
    ids=["nested x", "meta k", "meta count", "meta batch", "openvino meta", "sparse"],
)
def test_tensors_without_values_are_refused_by_name(
    call: Any, exc: type[Exception], words: str
) -> None:
    """Bug: torch's RuntimeError or NotImplementedError, naming nothing."""
    with pytest.raises(exc, match=words):
        call()


def test_a_list_k_is_not_read_entry_by_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: a per-matrix k given as a list went through the integer rule one
    entry at a time (40x np.asarray(k)). Plain ints now take C-speed passes
    only; the rule still reads anything else."""
    seen: list[Any] = []
    real = _offsets.index_or_none

    def spy(value: Any) -> Any:
        seen.append(value)
        return real(value)

    monkeypatch.setattr(_offsets, "index_or_none", spy)
    k = list(range(-500, 500))
    want = eyelike.eye(4, batch_shape=1000, k=np.array(k))
    np.testing.assert_array_equal(eyelike.eye(4, batch_shape=1000, k=k), want)
    assert seen == []
    eyelike.eye(4, batch_shape=2, k=[np.int8(1), 2])
    assert len(seen) == 2
    with pytest.raises(TypeError, match="integers only"):
        eyelike.eye(4, batch_shape=2, k=[True, 2])


def test_command_line_exits_quietly_when_its_reader_closes() -> None:
    """Bug: a BrokenPipeError traceback and status 1 (``eyelike 2 | true``,
    ``eyelike 3 --batch-shape 2 | head -1``). Now no message, and 141
    (128 + SIGPIPE), as a command-line tool stopped by that signal."""
    child = subprocess.Popen(
        [sys.executable, "-m", "eyelike", "3", "--batch-shape", "30000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    assert child.stderr is not None
    child.stdout.close()  # the reader is gone before anything is written
    errors = child.stderr.read()
    child.stderr.close()
    assert child.wait(timeout=120) == 141
    assert errors == b""


# Found by a review of the fixes above, each failing on the code before.


@pytest.mark.parametrize(
    "call",
    [
        lambda td: eyelike.eye(td),
        lambda td: eyelike.eye(2, batch_shape=td),
        lambda td: eyelike.eye(2, k=td),
        lambda td: eyelike.eye(2, k=[td], batch_shape=(1,)),
    ],
)
def test_a_0d_duration_array_is_no_integer(call: Any) -> None:
    """Reading a 0-d array by tolist() took timedelta64[ns] as its int."""
    with pytest.raises(TypeError, match="must"):
        call(np.array(np.timedelta64(3, "ns")))


def test_a_0d_object_array_holds_one_offset() -> None:
    k = np.empty((), dtype=object)
    k[()] = [1, 0]
    with pytest.raises(TypeError, match="k"):
        eyelike.eye(2, k=k, batch_shape=(2,))


@pytest.mark.parametrize(
    "rows",
    [
        [np.array([1, 0]), np.array([0, 1])],
        [torch.tensor([1, 0]), torch.tensor([0, 1])],
        [range(1, -1, -1), range(2)],
    ],
    ids=["NumPy rows", "torch rows", "ranges"],
)
def test_a_list_k_of_sequences_of_any_kind(rows: Any) -> None:
    """The list reader took only lists and tuples as levels."""
    got = eyelike.eye(2, k=rows, batch_shape=(2, 2), dtype="int8")
    want = eyelike.eye(
        2, k=np.array([[1, 0], [0, 1]]), batch_shape=(2, 2), dtype="int8"
    )
    np.testing.assert_array_equal(got, want)


def test_shared_and_looped_lists_are_refused_at_once() -> None:
    """A list holding itself twice doubled each level until memory ran out;
    40 levels of a shared pair describe 2**40 offsets."""
    looped: list[Any] = []
    looped += [looped, looped]
    with pytest.raises(ValueError, match="nested more than 62 levels"):
        eyelike.eye(2, k=looped, batch_shape=(2,))
    shared: Any = [0]
    for _ in range(40):
        shared = [shared, shared]
    with pytest.raises(MemoryError, match="k of shape"):
        eyelike.eye(2, k=shared, batch_shape=(2,) * 40)


def test_out_captured_by_an_outer_grad_is_refused_untouched() -> None:
    """Only the innermost transform was asked: a vmap inside a grad let
    torch's RuntimeError out."""
    out = torch.full((3, 3), 7.0)

    def inner(y: Any) -> Any:
        eyelike.eye(3, out=out)
        return y * 2

    with pytest.raises(ValueError, match="out was made outside"):
        torch.func.grad(lambda x: torch.func.vmap(inner)(x).sum())(torch.ones(2))
    assert bool((out == 7).all())


def test_cupy_dtype_refusal_is_a_dtype_error() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from eyelike._backends.cupy import check_dtype

    with pytest.raises(eyelike.DTypeError, match="float8_e4m3fn"):
        check_dtype(np.dtype(ml_dtypes.float8_e4m3fn))
