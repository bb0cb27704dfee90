"""The command line: ``eyelike ROWS [COLS] [-k K] [--batch-shape 2,3] ...``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from . import _registry
from ._core import eye

__all__ = ["main"]

# Backend name -> the module to import for it: every library with a name.
BACKENDS = {cls.name: cls.module for cls in _registry.BACKENDS if cls.module}


def _ints(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        msg = f"expected integers separated by commas; got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def _offset(text: str) -> int | list[int]:
    values = _ints(text)
    if not values:
        msg = f"expected an integer or a comma-separated list; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return values[0] if len(values) == 1 and "," not in text else values


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="eyelike",
        description=(
            "Print an identity or shifted-diagonal matrix, or a batch of them: "
            "element [..., row, col] is 1 where col - row == k."
        ),
        epilog=(
            "Example: eyelike 3 4 -k 1 --batch-shape 2 --dtype int32. "
            "`eyelike bench` runs the benchmark."
        ),
    )
    parser.add_argument("rows", type=int, metavar="ROWS", help="number of rows")
    parser.add_argument(
        "cols", type=int, nargs="?", metavar="COLS", help="number of columns"
    )
    parser.add_argument(
        "-k",
        type=_offset,
        default=0,
        metavar="K",
        help="diagonal offset, or one per matrix as a comma list (default 0)",
    )
    parser.add_argument(
        "--batch-shape",
        type=_ints,
        default=[],
        metavar="B1,B2,...",
        help="leading batch dimensions, e.g. 2,3 (default: one matrix)",
    )
    parser.add_argument("--dtype", default=None, help="dtype name, e.g. int32")
    parser.add_argument(
        "--backend",
        default="numpy",
        choices=sorted(BACKENDS),
        help="array library to generate with (default numpy)",
    )
    parser.add_argument("--device", default=None, help="device, e.g. cuda:0")
    return parser


def _show(result: Any) -> str:
    """The result as NumPy prints it, or as its own library does where NumPy
    cannot hold it (meta tensors, shapes NumPy cannot make)."""
    try:
        return str(_registry.backend_of_array(result, "result").to_numpy(result))
    except Exception:  # any conversion failure: show it natively
        return str(result)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["bench"]:
        from ._bench import main as bench_main

        return bench_main(words[1:])
    parser = _parser()
    args = parser.parse_args(words)
    try:
        xp = importlib.import_module(BACKENDS[args.backend])
    except ImportError as exc:
        parser.error(f"backend {args.backend} is not installed ({exc})")
    if args.backend == "cupy":
        try:
            usable = xp.cuda.runtime.getDeviceCount() > 0
        except Exception:  # no driver or runtime: no device
            usable = False
        if not usable:
            parser.error("backend cupy: no usable CUDA device on this machine")
    device: Any = args.device
    if device is not None and args.backend == "cupy" and device.isdigit():
        device = int(device)  # a CUDA device id
    try:
        result = eye(
            args.rows,
            args.cols,
            k=args.k,
            batch_shape=tuple(args.batch_shape),
            dtype=args.dtype,
            device=device,
            xp=xp,
        )
    except (TypeError, ValueError, MemoryError) as exc:
        parser.error(str(exc))
    print(_show(result))
    return 0
