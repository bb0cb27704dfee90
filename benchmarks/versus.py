"""Per-call cost of this checkout's eyelike against another revision's, in one
process: the check that a change left the small calls' speed as it was.

    python -m benchmarks.versus HEAD~1            # any git revision
    python -m benchmarks.versus main --only numpy --rounds 5
    python -m benchmarks.versus 988214f --large     # and the large cases

The other revision's package is unpacked (``git archive``) into a temporary
folder under another name and imported beside this one. Each case is timed
for both in each round, each first in turn, so a burst of noise on a
shared machine lands on both alike; the table gives the medians over the
rounds, and the median of each round's own ratio (new / old): the small
calls, and one offset per matrix at a data loader's batch sizes. The calls
clients make are timed beside the library's own, for both. Where torch is
installed, it also counts the guards torch.compile checks on each call of
a compiled function calling each version (counted in torch's guard log).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import tempfile
import timeit
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["cases", "clients", "collate", "large", "main", "unpack"]

ROOT = Path(__file__).resolve().parents[1]
LIBRARIES = ("numpy", "torch", "jax", "array_api_strict")


def unpack(revision: str, folder: Path) -> ModuleType:
    """``revision``'s ``src/eyelike``, imported as ``eyelike_versus``."""
    archive = subprocess.run(
        ["git", "archive", revision, "src/eyelike"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    (folder / "src" / "eyelike").rename(folder / "eyelike_versus")
    sys.path.insert(0, str(folder))
    return importlib.import_module("eyelike_versus")


def cases(m: Any, libraries: set[str]) -> dict[str, Callable[[], Any]]:
    """The small calls whose cost is the front end's, on each of
    ``libraries`` that is installed here."""
    import numpy as np

    x = np.empty((3, 3))
    found: dict[str, Callable[[], Any]] = {}
    if "numpy" in libraries:
        found |= {
            "numpy eye(3)": lambda: m.eye(3),
            "numpy eye(3, k=1, dtype=float32)": lambda: m.eye(3, k=1, dtype=np.float32),
            "numpy eye(3, batch_shape=(4,))": lambda: m.eye(3, batch_shape=(4,)),
            "numpy eye_like 3x3": lambda: m.eye_like(x),
            "numpy eye(3, out=)": lambda: m.eye(3, out=x),
        }
    torch = _optional("torch") if "torch" in libraries else None
    if torch is not None:
        t, tb = torch.empty(3, 3), torch.empty(4, 3, 3)
        compiled = torch.compile(
            lambda a: a + m.eye_like(a), fullgraph=True, backend="eager"
        )
        compiled(tb)
        # The same through inductor, as users compile: what the program
        # costs, beside the tracing's guards the eager backend shows.
        inductor = torch.compile(lambda a: a + m.eye_like(a), fullgraph=True)
        inductor(tb)
        found |= {
            "torch eye(3)": lambda: m.eye(3, xp=torch),
            "torch eye_like 3x3": lambda: m.eye_like(t),
            "torch eye_like 4x3x3": lambda: m.eye_like(tb),
            "torch eye(3, out=)": lambda: m.eye(3, out=t),
            "torch.compile x + eye_like(x)": lambda: compiled(tb),
            "torch.compile (inductor) x + eye_like": lambda: inductor(tb),
        }
    jnp = _optional("jax.numpy") if "jax" in libraries else None
    if jnp is not None:
        j = jnp.zeros((3, 3))
        found |= {
            "jax eye(3)": lambda: m.eye(3, xp=jnp).block_until_ready(),
            "jax eye_like 3x3": lambda: m.eye_like(j).block_until_ready(),
        }
    return found | collate(m, libraries)


# A data loader's batches (matrices, size) with one offset per matrix: the
# CPU table's collate sizes (``benchmarks.cases``).
COLLATE = ((2, 3), (32, 8), (256, 3), (32, 32))


def collate(m: Any, libraries: set[str]) -> dict[str, Callable[[], Any]]:
    """Per-matrix ``k`` (int64, of the result's library) at the collate
    sizes, float32, on NumPy and torch where installed."""
    import numpy as np

    found: dict[str, Callable[[], Any]] = {}
    torch = _optional("torch") if "torch" in libraries else None
    for batch, n in COLLATE:
        k = np.arange(batch, dtype=np.int64) % (2 * n - 1) - (n - 1)
        name = f"{batch}x{n}x{n} float32 k per matrix"
        if "numpy" in libraries:
            found[f"numpy {name}"] = partial(
                m.eye, n, k=k, batch_shape=batch, dtype=np.float32
            )
        if torch is not None:
            found[f"torch {name}"] = partial(
                m.eye,
                n,
                k=torch.as_tensor(k),
                batch_shape=batch,
                dtype=torch.float32,
                xp=torch,
            )
    return found


def large(m: Any, libraries: set[str]) -> dict[str, Callable[[], Any]]:
    """The CPU table's cases of a megabyte or more (``benchmarks.cases``):
    eyelike on NumPy, and on torch and JAX where installed, each the same
    call at both revisions (the rows whose cost is the build's, not the
    front end's)."""
    import numpy as np

    from .cases import CPU_CASES

    found: dict[str, Callable[[], Any]] = {}
    torch = _optional("torch") if "torch" in libraries else None
    jnp = _optional("jax.numpy") if "jax" in libraries else None
    for case in CPU_CASES:
        if case.nbytes < 1 << 20 or case.touch:
            continue
        k, dt = case.offsets(), case.np_dtype
        kw = {"k": k, "batch_shape": case.batch}
        if "numpy" in libraries:
            out = np.zeros(case.shape, dt) if case.out else None
            found[f"numpy {case.name}"] = partial(
                m.eye, case.n, dtype=dt, out=out, **kw
            )
        if case.out or case.dtype == "bool":
            continue
        if torch is not None:
            tk = torch.as_tensor(k) if case.per_matrix else k
            tdt = getattr(torch, case.dtype)
            found[f"torch {case.name}"] = partial(
                m.eye, case.n, k=tk, batch_shape=case.batch, dtype=tdt, xp=torch
            )
        if jnp is not None and case.dtype != "float64":
            jk = jnp.asarray(k) if case.per_matrix else k
            jdt = getattr(jnp, case.dtype)
            found[f"jax {case.name}"] = partial(
                _ready, m.eye, case.n, k=jk, batch_shape=case.batch, dtype=jdt, xp=jnp
            )
    return found


def _ready(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn``'s JAX result, computed (JAX dispatches asynchronously)."""
    return fn(*args, **kwargs).block_until_ready()


def clients(
    m: Any, libraries: set[str]
) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """The small calls real libraries make (kornia, scikit-learn, SciPy) on
    each of ``libraries`` installed here, each with the library's own call
    for the same arguments: (eyelike's, own)."""
    found: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {}
    torch = _optional("torch") if "torch" in libraries else None
    if torch is not None:
        dev, f32 = torch.device("cpu"), torch.float32
        found["torch eye(3, device=x.device, dtype=)"] = (
            lambda: m.eye(3, device=dev, dtype=f32, xp=torch),
            lambda: torch.eye(3, device=dev, dtype=f32),
        )
        found["torch eye(3, batch_shape=4, device=, dtype=)"] = (
            lambda: m.eye(3, batch_shape=4, device=dev, dtype=f32, xp=torch),
            lambda: torch.eye(3, device=dev, dtype=f32).expand(4, 3, 3).clone(),
        )
    compat = _optional("array_api_compat.numpy") if "numpy" in libraries else None
    if compat is not None:
        vendored = ModuleType("sklearn.externals.array_api_compat.numpy")
        vendored.__dict__.update(
            {k: v for k, v in vars(compat).items() if k != "__name__"}
        )
        for label, xp in (("compat", compat), ("vendored compat", vendored)):
            found[f"numpy ({label}) eye(3, dtype=, device='cpu')"] = _pair(m, xp)
    strict = _optional("array_api_strict") if "array_api_strict" in libraries else None
    if strict is not None:
        cpu = strict.Device("CPU_DEVICE")
        found["array_api_strict eye(3, dtype=, device=)"] = (
            lambda: m.eye(3, dtype=strict.float64, device=cpu, xp=strict),
            lambda: strict.eye(3, dtype=strict.float64, device=cpu),
        )
    return found


def _pair(m: Any, xp: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """eyelike's and ``xp``'s own ``eye(3, dtype=float64, device="cpu")``."""
    return (
        lambda: m.eye(3, dtype=xp.float64, device="cpu", xp=xp),
        lambda: xp.eye(3, dtype=xp.float64, device="cpu"),
    )


def _optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def guards(m: Any, torch: Any) -> dict[str, int]:
    """How many guards torch.compile checks on each call of a few functions
    calling ``m`` (fewer is cheaper): counted in torch's guard log."""
    import io
    import logging
    import re

    functions = {
        "eye_like(x)": lambda x: x + m.eye_like(x),
        "eye(n, batch_shape=, xp=torch)": lambda x: (
            x + m.eye(x.shape[-1], batch_shape=x.shape[:-2], xp=torch)
        ),
        "eye(n, device=x.device, dtype=x.dtype)": lambda x: (
            x + m.eye(x.shape[-1], device=x.device, dtype=x.dtype, xp=torch)
        ),
        "eye_like(x, k=per-matrix)": lambda x: (
            x + m.eye_like(x, k=torch.arange(x.shape[0]) % 3 - 1)
        ),
        "eye(n, out=empty_like(x))": lambda x: (
            x + m.eye(x.shape[-1], batch_shape=x.shape[:-2], out=torch.empty_like(x))
        ),
    }
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    logger = logging.getLogger("torch._dynamo")
    torch._logging.set_logs(guards=True)
    theirs = logger.handlers[:]
    logger.handlers = [handler]  # to this log only, not torch's on stderr
    found = {}
    try:
        for name, fn in functions.items():
            torch._dynamo.reset()
            log.seek(0)
            log.truncate()
            torch.compile(fn, fullgraph=True, backend="eager")(torch.zeros(4, 3, 3))
            found[name] = len(re.findall(r"\+- [A-Z_]+:", log.getvalue()))
    finally:
        logger.handlers = theirs
        torch._logging.set_logs()
    return found


def _large(old: Any, new: Any, libraries: set[str], rounds: int) -> None:
    """Print the large cases (`large`) of both revisions, timed side by
    side: per call, the fastest of 3 in each round, each first in turn."""
    print("# the CPU table's large cases: per call, medians of the rounds")
    olds, news = large(old, libraries), large(new, libraries)
    for name, fn in news.items():
        fn()  # (a first call: JAX compiles, pages are first touched)
        olds[name]()
        before: list[float] = []
        after: list[float] = []
        for i in range(rounds):
            pair = [(olds[name], before), (fn, after)]
            for call, into in pair[::-1] if i % 2 else pair:
                into.append(_per_call(call, 1) / 1e3)
        ratio = statistics.median(a / b for a, b in zip(after, before, strict=True))
        print(
            f"{name:44s} old {statistics.median(before):8.3f} ms  new "
            f"{statistics.median(after):8.3f} ms  new/old {ratio:5.3f}"
        )


def _per_call(fn: Callable[[], Any], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=3)) / number * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.versus")
    parser.add_argument("revision", help="the git revision to compare with")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--only", choices=LIBRARIES, action="append", help="this library only"
    )
    parser.add_argument(
        "--large",
        action="store_true",
        help="also the CPU table's cases of a megabyte or more (minutes)",
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # torch's notes on its first compile
    import eyelike

    with tempfile.TemporaryDirectory() as folder:
        old = unpack(args.revision, Path(folder))
        libraries = set(args.only or LIBRARIES)
        old_cases, new_cases = cases(old, libraries), cases(eyelike, libraries)
        print(f"# eyelike here against {args.revision}: per call, medians of")
        print(f"# {args.rounds} rounds, new/old the median round's; < 1 is faster")
        for name in old_cases:
            number = 300 if "jax" in name or "compile" in name else 2000
            if "per matrix" in name:
                number = 100 if "32x32" in name else 500
            before, after = [], []
            for i in range(args.rounds):
                # Each first in turn: a round's first call may run on colder
                # caches than its second.
                if i % 2:
                    after.append(_per_call(new_cases[name], number))
                    before.append(_per_call(old_cases[name], number))
                else:
                    before.append(_per_call(old_cases[name], number))
                    after.append(_per_call(new_cases[name], number))
            b, a = statistics.median(before), statistics.median(after)
            ratio = statistics.median(n / o for n, o in zip(after, before, strict=True))
            print(f"{name:34s} old {b:8.3f} us  new {a:8.3f} us  new/old {ratio:5.3f}")
        if args.large:
            _large(old, eyelike, libraries, args.rounds)
        print("# eyelike here and at the revision against the library's own call,")
        print("# as clients make it; new/old: the ratio of the two ratios")
        olds, news = clients(old, libraries), clients(eyelike, libraries)
        for name, (ours, own) in news.items():
            then: list[float] = []
            mine: list[float] = []
            theirs: list[float] = []
            for i in range(args.rounds):
                trio = [(olds[name][0], then), (ours, mine), (own, theirs)]
                for fn, into in trio[::-1] if i % 2 else trio:
                    into.append(_per_call(fn, 2000))
            now = statistics.median(a / b for a, b in zip(mine, theirs, strict=True))
            was = statistics.median(a / b for a, b in zip(then, theirs, strict=True))
            print(
                f"{name:44s} eyelike {statistics.median(mine):7.3f} us  own "
                f"{statistics.median(theirs):7.3f} us  ratio {now:5.2f}  "
                f"(at the revision {was:5.2f}; new/old {now / was:5.3f})"
            )
        torch = _optional("torch") if "torch" in libraries else None
        if torch is not None:
            print("# torch.compile guards checked on each call")
            counts = guards(old, torch), guards(eyelike, torch)
            for name in counts[0]:
                print(f"{name:40s} old {counts[0][name]:4d}  new {counts[1][name]:4d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
