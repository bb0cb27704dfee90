"""eyelike under ``torch.compile(fullgraph=True)``: no graph break, no warning,
no more recompiles than torch's own idiom, the same values as eager.

Dynamo traces eyelike's Python (validation included) into the caller's graph,
so the compiled function holds only torch's own ops. ``backend="eager"``
checks the tracing (what breaks graphs, warns or recompiles) quickly; one
test runs the full inductor pipeline.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import eyelike

torch = pytest.importorskip("torch")
counters = pytest.importorskip("torch._dynamo.utils").counters

Fn = Callable[[Any], Any]


def _like(x: Any) -> Any:
    return x + eyelike.eye_like(x)


def _like_k(x: Any) -> Any:
    return x * eyelike.eye_like(x, k=-1, dtype=torch.float32)


def _eye(x: Any) -> Any:
    n = x.shape[-1]
    return x + eyelike.eye(n, n, k=1, batch_shape=x.shape[:-2], xp=torch)


def _per_matrix(x: Any) -> Any:
    k = torch.arange(x.shape[0]) % 5 - 2
    return x + eyelike.eye_like(x, k=k)


def _idiom(x: Any) -> Any:
    n = x.shape[-1]
    return x + torch.eye(n, dtype=x.dtype).expand(x.shape).clone()


def _idiom_per_matrix(x: Any) -> Any:
    k = torch.arange(x.shape[0]) % 5 - 2
    rows, cols = torch.arange(x.shape[-2]), torch.arange(x.shape[-1])
    mask = (cols[None, :] - rows[:, None])[None] == k[:, None, None]
    return x + mask.to(x.dtype)


CASES = {
    "eye_like": _like,
    "eye_like k": _like_k,
    "eye": _eye,
    "per-matrix k": _per_matrix,
}
BATCHES = (2, 5, 8, 13)


def _compile_and_run(fn: Fn, dynamic: bool, backend: str = "eager") -> int:
    """Compile ``fn``, check it against eager on several batch sizes with no
    warning at all; returns how many graphs were compiled."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic, backend=backend)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for b in BATCHES:
            x = torch.rand(b, 4, 4)
            torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)
    assert [str(w.message) for w in caught] == []
    return int(counters["stats"]["unique_graphs"])


@pytest.fixture(scope="module", autouse=True)
def _torch_warmed_up() -> None:
    # torch warns once per process on its own first compile (deprecated
    # internals it imports); that is not eyelike's to answer for.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.compile(_idiom, fullgraph=True)(torch.zeros(2, 3, 3))


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", list(CASES))
def test_fullgraph_no_warning_no_extra_recompile(name: str, dynamic: bool) -> None:
    idiom = _idiom_per_matrix if name == "per-matrix k" else _idiom
    graphs_idiom = _compile_and_run(idiom, dynamic)
    graphs = _compile_and_run(CASES[name], dynamic)
    assert graphs <= graphs_idiom, (graphs, graphs_idiom)


def test_inductor_end_to_end() -> None:
    assert _compile_and_run(_like, dynamic=True, backend="inductor") == 1


def test_errors_still_raised_under_compile() -> None:
    # Validation runs while tracing: bad input is refused with eyelike's own
    # message, not lost in the compiler.
    def bad(x: Any) -> Any:
        return eyelike.eye_like(x, k=1.5)

    compiled = torch.compile(bad, fullgraph=True, backend="eager")
    with pytest.raises(Exception, match="k must be an integer"):
        compiled(torch.zeros(3, 3))


@pytest.mark.parametrize(
    "k",
    [np.array([True, False]), np.array([1.0, 2.0]), torch.tensor([True, False])],
    ids=["numpy bool", "numpy float", "torch bool"],
)
def test_a_k_refused_reads_alike_compiled_and_eager(k: Any) -> None:
    # Dynamo traces a NumPy k as a tensor: the dtype is named without the
    # library's prefix ("bool", not "torch.bool"), as eagerly.
    def call(x: Any) -> Any:
        return eyelike.eye_like(x, k=k)

    x = torch.zeros(2, 3, 3)
    messages = []
    for fn in (call, torch.compile(call, backend="eager")):
        with pytest.raises(TypeError) as caught:
            fn(x)
        messages.append(str(caught.value).splitlines()[0])
    name = "float64" if k.dtype == np.float64 else "bool"
    assert messages == [f"k must be an integer array; got dtype {name}"] * 2


def test_first_call_compiled_in_a_fresh_process() -> None:
    # Regression: eyelike's torch backend was made (and a dtype table
    # filled) while torch.compile traced the process's first call, so the
    # second call failed the guards on them and compiled again. eyelike is
    # imported before torch here, as isort orders them.
    # The per-matrix case first: it also imports array-api-compat's torch
    # wrapper while tracing. One graph for each function.
    code = (
        "import eyelike, torch, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from torch._dynamo.utils import counters\n"
        "def per_matrix(x):\n"
        "    return x + eyelike.eye_like(x, k=torch.arange(x.shape[0]) % 3 - 1)\n"
        "for fn in (per_matrix, lambda x: x + eyelike.eye_like(x)):\n"
        "    f = torch.compile(fn, fullgraph=True, backend='eager')\n"
        "    for _ in range(3):\n"
        "        f(torch.zeros(4, 3, 3))\n"
        "print(counters['stats']['unique_graphs'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert done.stdout.split()[-1] == "2", done.stdout


@pytest.mark.parametrize("dtype", ["float32", "int8", "float8_e4m3fn"])
def test_a_dtype_looked_up_compiles_once(dtype: str) -> None:
    """Bug: a dtype that takes the table (a name, a float8 type) was resolved
    through the dtype cache while compiling: the entry the first call added
    failed the second call's guard, which compiled again (and so would any
    other call's new entry, a NumPy one included)."""
    spelling = dtype if dtype != "float8_e4m3fn" else getattr(torch, dtype)

    def fn(x: Any) -> Any:
        return x + eyelike.eye(3, xp=torch, dtype=spelling).float()

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, fullgraph=True, backend="eager")
    for n in range(4):
        compiled(torch.zeros(3, 3))
        eyelike.eye(2, dtype=["int16", "uint16", "float16", "int32"][n])  # cache grows
    assert int(counters["stats"]["unique_graphs"]) == 1


@pytest.mark.parametrize(
    "dynamic", [False, True, None], ids=["static", "dynamic", "auto"]
)
def test_out_under_compile(dynamic: bool | None) -> None:
    """Bug: an ``out=`` under torch.compile(fullgraph=True) with symbolic
    sizes failed to compile ("sort with non-constant keys": the overlap
    check sorted its symbolic strides); a contiguous out has nothing to sort."""

    def fn(x: Any) -> Any:
        return eyelike.eye_like(x, k=1, out=torch.empty_like(x))

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic, backend="eager")
    for b in BATCHES:
        x = torch.rand(b, 4, 4)
        torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)
    assert int(counters["stats"]["unique_graphs"]) <= (1 if dynamic else len(BATCHES))
    # A view whose elements share memory is still refused, compiled or not.
    shared = torch.zeros(4).expand(4, 4)
    with pytest.raises(ValueError, match="share memory"):
        torch.compile(lambda x: eyelike.eye(4, out=x), backend="eager")(shared)


@pytest.mark.parametrize(
    "dynamic", [False, True, None], ids=["static", "dynamic", "auto"]
)
@pytest.mark.parametrize(
    "shape", [(0, 3), (3, 0), (2, 0, 3), (0, 2, 3), (0, 2**63 - 1)]
)
def test_empty_outputs_under_compile(
    shape: tuple[int, ...], dynamic: bool | None
) -> None:
    """Bug: every empty output failed under torch.compile(fullgraph=True),
    eye, eye_like and ``out=`` alike: the check of its strides multiplied
    ``itertools.takewhile`` through ``math.prod``, which Dynamo cannot trace
    ("Failed to convert args/kwargs to proxy"). And (0, 2**63 - 1) failed
    in torch.eye's fake tensor, whose size arithmetic overflows: an empty
    output is now made as zeros, nothing of its other dimensions built."""
    *batch, rows, cols = shape
    calls: list[Fn] = [
        lambda x: eyelike.eye_like(x, k=1),
        lambda x: eyelike.eye(
            rows, cols, k=[-1] if batch else -1, batch_shape=batch, xp=torch
        ),
        lambda x: eyelike.eye(rows, cols, batch_shape=batch, out=torch.empty_like(x)),
    ]
    for fn in calls:
        torch._dynamo.reset()
        got = torch.compile(fn, fullgraph=True, dynamic=dynamic, backend="eager")(
            torch.empty(shape)
        )
        assert got.shape == shape
        assert got.dtype == torch.float32


def _outcome(fn: Fn, x: Any) -> tuple[Any, ...]:
    try:
        got = fn(x)
    except Exception as exc:
        return ("raised", type(exc).__name__, str(exc))
    values = None if got.is_meta else got.tolist()
    return ("returned", got.shape, got.dtype, got.device, values)


def _messages(error: BaseException | None) -> str:
    """An error's message and its causes' (torch.compile(fullgraph=True)
    raises a caller's own error as the cause of its own)."""
    found = []
    while error is not None:
        found.append(str(error))
        error = error.__cause__ or error.__context__
    return " | ".join(found)


def test_an_out_whose_strides_do_not_nest_under_compile() -> None:
    """Bug (a re-read of issue 44's out= fix): an out whose strides do not
    nest (``as_strided((2, 3), (3, 2))``: all elements distinct) is checked
    element by element by NumPy, which Dynamo cannot trace: fullgraph raised
    torch's raw "attempted to trace numpy.* function". Compiled, it is now
    refused naming out, untouched; eagerly it is filled; a transpose (whose
    strides nest) is filled compiled too."""
    compiled = torch.compile(
        lambda o: eyelike.eye(2, 3, out=o, xp=torch), fullgraph=True, backend="eager"
    )
    base = torch.full((8,), 7.0)
    with pytest.raises(Exception) as info:  # (torch's own, ours its cause)
        compiled(base.as_strided((2, 3), (3, 2)))
    assert "out's layout (strides (3, 2) for shape (2, 3)) does not nest" in (
        _messages(info.value)
    )
    assert bool((base == 7).all())
    eager = eyelike.eye(2, 3, out=base.as_strided((2, 3), (3, 2)), xp=torch)
    torch.testing.assert_close(eager, torch.eye(2, 3), rtol=0, atol=0)
    transposed = torch.full((3, 2), 7.0).t()
    torch.testing.assert_close(compiled(transposed), torch.eye(2, 3), rtol=0, atol=0)
    # Refused in the eager call's order: a wrong shape is named first.
    wrong = torch.zeros(20).as_strided((3, 3), (3, 2))
    with pytest.raises(Exception) as info:  # (torch's own, ours its cause)
        compiled(wrong)
    # (Its size symbolic by now: the second shape this function has seen.)
    assert re.search(
        r"out has shape \(\w+, 3\); the result needs \(2, 3\)", (_messages(info.value))
    )


@pytest.mark.parametrize("device", ["cpu", "cpu:0", "meta", "cuda", "cuda:3"])
@pytest.mark.parametrize("call", ["eye(3)", "eye(3, 4, k=1, batch_shape=2)"])
def test_a_device_given_under_compile_is_the_eager_call(device: str, call: str) -> None:
    """Bug (found in review): the short path checked the device on the eye it
    made, and torch.compile makes a fake tensor even on a device this build
    lacks: a CUDA device on a CPU-only build compiled, then failed in
    torch's words instead of eyelike's. Each device as clients pass it
    (``x.device``, a ``torch.device``), compiled and eager alike."""
    dev = torch.device(device)
    if "k=1" in call and device == "cpu":  # a large batch, k beyond int64 too
        _check_large_offset_under_compile()
    extra: dict[str, Any] = {"k": 1, "batch_shape": 2} if "k=1" in call else {}
    cols = 4 if extra else None

    def fn(x: Any) -> Any:
        return eyelike.eye(3, cols, device=dev, dtype=x.dtype, xp=torch, **extra)

    torch._dynamo.reset()
    x = torch.zeros(2, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a graph break's note
        compiled = _outcome(torch.compile(fn, backend="eager"), x)
    assert compiled == _outcome(fn, x)


def _check_large_offset_under_compile() -> None:
    # Bug (found in review): a large output's short path passed k past
    # int64 to torch's diagonal(), which failed under torch.compile (where
    # no except sees it); the general path clamps k and gives zeros.
    def fn(x: Any) -> Any:
        return x + eyelike.eye(600, batch_shape=2, k=2**70, dtype=x.dtype, xp=torch)

    torch._dynamo.reset()
    x = torch.zeros(2, 600, 600)
    got = torch.compile(fn, fullgraph=True, backend="eager")(x)
    assert not got.any()


# A changing k (issue 45): the calls, and the steps they are compiled over:
# k from 0 to 8 on 4x4 matrices (more values than torch's recompile limit),
# beyond the matrix on both sides, then batch and matrix sizes that change,
# past the gate's 32768 elements and a matrix past 2**18 (where the eager
# build writes in place).
def _mask_idiom_k(x: Any, k: Any) -> Any:
    rows, cols = torch.arange(x.shape[-2]), torch.arange(x.shape[-1])
    return x + ((cols - rows[:, None]) == k).to(x.dtype)


def _eye_k(x: Any, k: Any) -> Any:
    *batch, rows, cols = x.shape
    return x + eyelike.eye(rows, cols, k=k, batch_shape=batch, xp=torch, dtype=x.dtype)


K_CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "eye_like": lambda x, k: x + eyelike.eye_like(x, k=k),
    "eye": _eye_k,
    "eye, one matrix": lambda x, k: (
        x[0] + eyelike.eye(x.shape[-2], x.shape[-1], k=k, device=x.device, xp=torch)
    ),
    "eye_like out=": lambda x, k: x + eyelike.eye_like(x, k=k, out=torch.empty_like(x)),
    "eye out=": lambda x, k: (
        x + eyelike.eye(x.shape[-2], x.shape[-1], k=k, out=torch.empty_like(x[0]))
    ),
}
K_STEPS = (
    *(((2, 4, 4), k) for k in range(9)),
    ((3, 4, 4), -7),
    ((5, 6, 7), 5),
    ((4, 6, 7), -2),
    ((2, 200, 200), 3),
    ((2, 600, 600), -700),
    ((7, 9, 9), 1),
    ((2, 3, 5), 9),
)


def _graphs_over_k(fn: Callable[[Any, Any], Any], dynamic: bool | None) -> list[int]:
    """The graphs compiled so far after each of `K_STEPS` (each result
    checked against eager)."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic, backend="eager")
    seen = []
    for shape, k in K_STEPS:
        x = torch.rand(shape)
        torch.testing.assert_close(compiled(x, k), fn(x, k), rtol=0, atol=0)
        seen.append(int(counters["stats"]["unique_graphs"]))
    return seen


@pytest.mark.parametrize("dynamic", [True, None], ids=["dynamic", "auto"])
@pytest.mark.parametrize("name", list(K_CALLS))
def test_a_changing_k_compiles_no_more_than_the_mask_idiom(
    name: str, dynamic: bool | None
) -> None:
    """Bug (issue 45): an int ``k`` that changed compiled one graph per value
    (a guard ``k == value`` from the diagonal fill, ``k <= n_cols`` from the
    gate), and the ninth raised FailOnRecompileLimitHit; the mask idiom
    compiles once (twice where automatic dynamic first sees k constant).
    Step by step, never more graphs than the idiom written by hand."""
    idiom = _graphs_over_k(_mask_idiom_k, dynamic)
    assert idiom[-1] <= 4, idiom  # (what this test holds eyelike to)
    ours = _graphs_over_k(K_CALLS[name], dynamic)
    assert all(a <= b for a, b in zip(ours, idiom, strict=True)), (ours, idiom)


def test_a_changing_k_in_a_fresh_process() -> None:
    """The reported call, as reported (dynamic=True): one frame compiled
    for nine values of k, counted by torch's CompileCounter, in a process
    where nothing has compiled before."""
    code = (
        "import eyelike, torch, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from torch._dynamo.testing import CompileCounter\n"
        "counter = CompileCounter()\n"
        "f = torch.compile(lambda x, k: x + eyelike.eye_like(x, k=k),\n"
        "                  backend=counter, dynamic=True, fullgraph=True)\n"
        "x = torch.zeros(3, 5, 5)\n"
        "for k in range(9):\n"
        "    assert torch.equal(f(x, k), x + eyelike.eye_like(x, k=k))\n"
        "print(counter.frame_count)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "1", done.stdout


def test_a_changing_k_through_inductor() -> None:
    """The default compile (inductor, automatic dynamic): the first k
    compiled as a constant, every later one by one graph, as the idiom."""
    torch._dynamo.reset()
    counters.clear()
    fn = K_CALLS["eye_like"]
    compiled = torch.compile(fn, fullgraph=True)
    x = torch.rand(2, 4, 4)
    for k in range(-4, 6):
        torch.testing.assert_close(compiled(x, k), fn(x, k), rtol=0, atol=0)
    assert int(counters["stats"]["unique_graphs"]) == 2


# Sizes symbolic under inductor (the default backend): its second shape, or
# dynamic=True. While Dynamo traces, a symbolic size reads as an int.
_SHAPES = ((2, 3), (4, 5), (2, 6, 5))


def _through_inductor(fn: Fn) -> None:
    """``fn`` compiled by inductor, against eager, over `_SHAPES`."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True)
    for shape in _SHAPES:
        x = torch.rand(shape)
        torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)


@pytest.mark.parametrize("k", [2**63, -(10**30)], ids=["2**63", "-10**30"])
def test_an_int_k_past_int64_through_inductor(k: int) -> None:
    """Bug: the clamp of an int ``k`` past int64 by symbolic sizes (the
    gate's, the general path's) put a constant past int64 into inductor's
    code, which refused it (InductorError, OverflowError)."""
    _through_inductor(lambda x: x + eyelike.eye_like(x, k=k))
    _through_inductor(lambda x: x + eyelike.eye_like(x, k=k, dtype=torch.float64))


@pytest.mark.parametrize("form", ["tensor", "NumPy"])
def test_a_uint64_k_through_inductor(form: str) -> None:
    """Bug (this round's one array clamp, caught by a review): a uint64
    ``k``'s type bounds met symbolic sizes (InductorError: 2**64 - 1 too
    big for int64). torch's k goes into int64 first, then by the sizes."""
    np = pytest.importorskip("numpy")
    values = [0, 1, 2**63]
    k = (
        torch.tensor(values, dtype=torch.uint64)
        if form == "tensor"
        else np.array(values, dtype=np.uint64)
    )

    def fn(x: Any) -> Any:
        *_, rows, cols = x.shape
        return x + eyelike.eye(rows, cols, batch_shape=3, k=k, xp=torch).sum(0)

    _through_inductor(fn)


def test_a_list_k_keeps_the_sizes_symbolic() -> None:
    """Bug: a list ``k`` was clamped by the sizes (read as ints while Dynamo
    traces), which fixed them: one graph per shape under dynamic=True (an
    int ``k``, or a NumPy one: one graph)."""
    fn = lambda x: x + eyelike.eye_like(x, k=[1, -1])  # noqa: E731
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, fullgraph=True, dynamic=True, backend="eager")
    for shape in ((2, 4, 5), (2, 5, 6), (2, 7, 3)):  # (not square: one symbol)
        x = torch.rand(shape)
        torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)
    assert int(counters["stats"]["unique_graphs"]) == 1


@pytest.mark.parametrize(
    "k",
    [[0, 2**63], [0, -(10**30)], (0, 2**32 + 1), [1, 2**32 - 1]],
    ids=["2**63", "-10**30", "2**32 + 1", "2**32 - 1"],
)
def test_a_list_k_past_int32_through_inductor(k: Any) -> None:
    """Bug (review): with ``dynamic=True`` a list's entries are traced ints,
    which inductor wraps past int32 (2**32 - 1 became -1: a diagonal), as it
    does in the mask idiom written by hand; an entry past int64, clamped to
    2**63 - 1 while tracing, wrapped alike. Each entry past int32 is now
    clamped as a Python int before any array holds it."""
    torch._dynamo.reset()

    def fn(x: Any, k: Any) -> Any:
        return x + eyelike.eye_like(x, k=k)

    compiled = torch.compile(fn, fullgraph=True, dynamic=True)
    x = torch.zeros(2, 3, 5)
    torch.testing.assert_close(compiled(x, k), fn(x, k), rtol=0, atol=0)
