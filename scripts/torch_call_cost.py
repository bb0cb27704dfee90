"""eyelike's per-call cost on torch (CPU, eager) against torch's own calls.

    python scripts/torch_call_cost.py [ROUNDS]

The cases of the per-call targets: a 3x3 float32 matrix against a bare
``torch.eye(3)`` (no keyword: torch's default dtype and device) and against
the smallest wrapper that follows a tensor (``torch.eye`` with its shape,
dtype and device), and a 64x32x32 batch against
``torch.eye(32).expand(64, 32, 32).clone()``. One process, one torch thread
(a second thread only adds noise at these sizes), every call timed in
rounds of 1000 in a new random order each round; times are medians, ratios
medians of each round's own ratio. ``python -m benchmarks`` times the same calls
on float64 against torch's idioms with the dtype given.
"""

from __future__ import annotations

import random
import statistics
import sys
import timeit
from collections.abc import Callable
from typing import Any

import torch

import eyelike


def main(rounds: int) -> None:
    torch.set_num_threads(1)
    x = torch.empty(3, 3)
    xb = torch.empty(64, 32, 32)

    def wrapper(x: Any) -> Any:
        return torch.eye(x.shape[0], x.shape[1], dtype=x.dtype, device=x.device)

    cases: dict[str, Callable[[], Any]] = {
        "torch.eye(3)": lambda: torch.eye(3),
        "wrapper(x): torch.eye(3, 3, dtype=, device=)": lambda: wrapper(x),
        "eyelike.eye_like(x)": lambda: eyelike.eye_like(x),
        "eyelike.eye(3, xp=torch)": lambda: eyelike.eye(3, xp=torch),
        "torch.eye(32).expand(64, 32, 32).clone()": lambda: (
            torch.eye(32).expand(64, 32, 32).clone()
        ),
        "eyelike.eye_like(64x32x32)": lambda: eyelike.eye_like(xb),
    }
    for call in cases.values():
        call()
    times: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for _ in range(rounds):
        random.shuffle(names)
        for name in names:
            times[name].append(timeit.Timer(cases[name]).timeit(1000) / 1000)

    def ratio(a: str, b: str) -> float:
        return statistics.median(p / q for p, q in zip(times[a], times[b], strict=True))

    one, batch = "torch.eye(3)", "torch.eye(32).expand(64, 32, 32).clone()"
    print(f"torch {torch.__version__}, {rounds} rounds; medians")
    for name in cases:
        base = batch if "64" in name else one
        print(
            f"{name:44s} {statistics.median(times[name]) * 1e6:7.2f} us"
            f"  {ratio(name, base):5.2f}x {base}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 31)
