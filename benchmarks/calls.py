"""How the code runs a call: eyelike's own function calls, the files they
are in, and how many times each file is entered from another, for a few
calls of the general path and the short one. Counts, not timings: the same
on every machine.

    python -m benchmarks.calls
    python -m benchmarks.calls --verbose    # each call, in order
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import eyelike

__all__ = ["Call", "calls", "cases", "main"]

SRC = Path(eyelike.__file__).resolve().parent

# (file under src/eyelike, function, the calling file there: "" if outside)
Call = tuple[str, str, str]


def calls(fn: Callable[[], Any]) -> list[Call]:
    """eyelike's function calls while ``fn`` runs (once warm, once traced)."""
    fn()  # first: caches filled, imports made
    found: list[Call] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        path = Path(frame.f_code.co_filename)
        if SRC not in path.parents:
            return
        back = Path(frame.f_back.f_code.co_filename) if frame.f_back else SRC
        caller = back.relative_to(SRC).as_posix() if SRC in back.parents else ""
        found.append((path.relative_to(SRC).as_posix(), frame.f_code.co_name, caller))

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return found


def cases() -> dict[str, Callable[[], Any]]:
    """The calls traced: the short path's batch, and the general path's."""
    import numpy as np

    found: dict[str, Callable[[], Any]] = {
        "numpy eye(3, batch_shape=4, k=1)": lambda: eyelike.eye(3, batch_shape=4, k=1),
        "numpy eye(3, batch_shape=4, k=[0, 1, 2, 3])": lambda: eyelike.eye(
            3, batch_shape=4, k=[0, 1, 2, 3]
        ),
        "numpy eye(300, k=1)": lambda: eyelike.eye(300, k=1),
        "numpy eye(3, out=)": lambda: eyelike.eye(3, out=np.empty((3, 3))),
    }
    try:
        import torch
    except ImportError:
        return found
    k = torch.arange(4)
    found["torch eye(3, batch_shape=4, k=tensor)"] = lambda: eyelike.eye(
        3, batch_shape=4, k=k, xp=torch
    )
    found["torch eye(300, k=1)"] = lambda: eyelike.eye(300, k=1, xp=torch)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.calls")
    parser.add_argument("--verbose", action="store_true", help="list each call")
    args = parser.parse_args(argv)
    for name, fn in cases().items():
        found = calls(fn)
        entries = collections.Counter(w for w, _, caller in found if caller != w)
        files = {where for where, _, _ in found}
        most = entries.most_common(1)[0]
        print(
            f"{name}: {len(found)} calls in {len(files)} files, "
            f"{sum(entries.values())} entries (most: {most[0]}, {most[1]})"
        )
        if args.verbose:
            print("   ", " > ".join(f"{w}:{f}" for w, f, _ in found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
