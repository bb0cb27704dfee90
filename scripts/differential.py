"""This checkout's ``eye`` and ``eye_like`` against another revision's, on
fuzzed arguments, in one process: the check that a change of the code's
shape left its behaviour as it was.

    python scripts/differential.py REVISION [EXAMPLES]

The other revision's package is unpacked beside this one (as
``python -m benchmarks.versus`` does). Each call is made with both, on the
same arguments drawn from the tests' own strategies (hostile values in
every argument, every namespace installed, ``eye_like`` too), and the two
outcomes compared: the result's type, shape, dtype, device and bytes, or
the exception's type and message. Prints each difference, then the count.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from benchmarks.versus import unpack  # noqa: E402
from helpers.fuzz_strategies import hostile  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import eyelike  # noqa: E402


def _namespaces() -> list[Any]:
    found: list[Any] = [None, np]
    for name in ("torch", "array_api_strict", "jax.numpy", "dask.array"):
        with contextlib.suppress(ImportError):
            found.append(__import__(name, fromlist=["_"]))
    return found


def _outcome(fn: Any) -> tuple[Any, ...]:
    """What ``fn()`` gave: the array's type, shape, dtype, device and bytes,
    or the exception's type and message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            x = fn()
            if hasattr(x, "compute"):  # Dask
                x = x.compute()
            if type(x).__module__.startswith("torch"):
                t = x.detach().cpu().contiguous()
                raw = t.view(-1).view(torch_uint8()) if t.numel() else t
                data = b"" if x.device.type == "meta" else raw.numpy().tobytes()
                return ("torch", tuple(x.shape), str(x.dtype), str(x.device), data)
            a = np.asarray(x)
            return (type(x).__name__, a.shape, str(a.dtype), a.tobytes())
        except Exception as exc:
            return ("raised", type(exc).__name__, str(exc))


def torch_uint8() -> Any:
    import torch

    return torch.uint8


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    old = unpack(argv[0], Path(tempfile.mkdtemp()))
    examples = int(argv[1]) if len(argv) > 1 else 2000
    namespaces = _namespaces()
    counts = st.integers(0, 6) | hostile("n_rows")
    offsets = st.integers(-8, 8) | st.lists(st.integers(-5, 5), max_size=4)
    batches = st.integers(0, 4) | st.lists(st.integers(0, 3), max_size=2).map(tuple)
    names = ["float32", "int8", "bool", "uint16", "bfloat16", "complex64"]
    dtypes = st.none() | st.sampled_from(names) | hostile("dtype")
    seen = [0, 0]

    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(
        st.sampled_from(namespaces),
        counts,
        st.none() | counts,
        offsets | hostile("k"),
        batches | hostile("batch_shape"),
        dtypes,
        st.booleans(),
    )
    def compare(xp: Any, r: Any, c: Any, k: Any, b: Any, dt: Any, like: bool) -> None:
        if like:
            ns = np if xp is None else xp
            x = ns.zeros((2, 3, 4))
            calls = [lambda m: m.eye_like(x, k=k, dtype=dt)]
        else:
            calls = [lambda m: m.eye(r, c, k=k, batch_shape=b, dtype=dt, xp=xp)]
        for call in calls:
            new = _outcome(lambda: call(eyelike))  # noqa: B023 (called at once)
            was = _outcome(lambda: call(old))  # noqa: B023
            seen[0] += 1
            if new != was:
                seen[1] += 1
                print("DIFFERENT", getattr(xp, "__name__", xp), like, r, c, k, b, dt)
                print("  here:", str(new)[:300])
                print("  then:", str(was)[:300])

    compare()
    print(f"{seen[0]} calls compared with {argv[0]}: {seen[1]} differences")
    return 1 if seen[1] else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
