"""The command line: ``eyelike ROWS [COLS] [-k K] [--batch-shape 2,3] ...``."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import __version__
from . import _backends as _registry
from ._core import eye
from ._validate.dtypes import dtype_name, is_ml_dtype

__all__ = ["main"]

# Backend name -> the module to import for it: every library with a name.
LIBRARIES = {cls.name: cls.namespaces[0] for cls in _registry.BACKENDS}

# A word that starts with a minus and a digit ("-1", "-1,2", "-2,0,1") is a
# value, never an option: eyelike has no option of that form. Python before
# 3.13 takes "-1,2" for an unknown option ("-k: expected one argument")
# because only plain numbers such as "-1" or "-1.5" count as negative.
# Exit status where the output's reader closed it early.
_BROKEN_PIPE = 128 + 13
_NEGATIVE_VALUE = re.compile(r"-\.?\d")


def _entries(text: str, what: str, example: str) -> list[int]:
    """The integers of a comma-separated list; an empty entry is an error."""
    parts = text.split(",")
    values = []
    for i, part in enumerate(parts, 1):
        if not part.strip():
            msg = (
                f"entry {i} of {text!r} is empty; expected {what} separated "
                f"by commas, e.g. {example}"
            )
            raise argparse.ArgumentTypeError(msg)
        try:
            values.append(int(part))
        except ValueError:
            msg = f"entry {i} of {text!r} is {part.strip()!r}, not an integer"
            raise argparse.ArgumentTypeError(msg) from None
    return values


def _batch_shape(text: str) -> list[int]:
    # An empty value is the empty shape: one matrix, as when the option is
    # left out. Any other empty entry is a typo (2,,3), never skipped.
    if not text.strip():
        return []
    return _entries(text, "sizes", "2,3")


def _offset(text: str) -> int | list[int]:
    if not text.strip():
        msg = "expected an integer or a comma-separated list; got an empty value"
        raise argparse.ArgumentTypeError(msg)
    values = _entries(text, "offsets", "-1,2")
    # "-k 1" is one offset for every matrix; a list, one offset per matrix.
    return values[0] if len(values) == 1 else values


_USAGE = """\
%(prog)s ROWS [COLS] [-k K | -k K1,K2,...] [--batch-shape B1,B2,...]
               [--dtype NAME] [--backend LIB] [--device DEV]
       %(prog)s --version | --help"""

_DESCRIPTION = """\
Print an identity or shifted-diagonal matrix, or a batch of them: element
[..., row, col] is 1 where col - row == k, and 0 elsewhere. The first line of
the output states the shape, the dtype and the array library; bfloat16,
float8 and other ml_dtypes values are printed widened to float32 (int4 and
the like to int64)."""

_EPILOG = """\
examples:
  eyelike 3 4 -k 1 --batch-shape 2 --dtype int32
  eyelike 3 -k -1,2 --batch-shape 2        one offset per matrix
  eyelike 4 --dtype bfloat16 --backend torch

Bad arguments print the usage and one error line, and exit with status 2."""


def _parser() -> argparse.ArgumentParser:
    backends = ", ".join(sorted(LIBRARIES))
    parser = argparse.ArgumentParser(
        prog="eyelike",
        usage=_USAGE,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        # The description and epilog are laid out by hand (the examples).
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser._negative_number_matcher = _NEGATIVE_VALUE
    parser.add_argument("rows", type=int, metavar="ROWS", help="number of rows")
    parser.add_argument(
        "cols",
        type=int,
        nargs="?",
        metavar="COLS",
        help="number of columns (default: ROWS)",
    )
    parser.add_argument(
        "-k",
        type=_offset,
        default=0,
        metavar="K",
        help=(
            "diagonal offset: 0 the main diagonal, > 0 above, < 0 below "
            "(default 0); or one offset per matrix as a comma-separated "
            "list, e.g. -k -1,2"
        ),
    )
    parser.add_argument(
        "--batch-shape",
        type=_batch_shape,
        default=[],
        metavar="B1,B2,...",
        help="leading batch dimensions, e.g. 2,3 (default: one matrix)",
    )
    parser.add_argument(
        "--dtype",
        default=None,
        metavar="NAME",
        help=(
            "dtype name, e.g. int32, bool, float16, bfloat16 (default: the "
            "library's default floating dtype)"
        ),
    )
    parser.add_argument(
        "--backend",
        default="numpy",
        choices=sorted(LIBRARIES),
        metavar="LIB",
        help=f"array library to make it with: {backends} (default numpy)",
    )
    parser.add_argument(
        "--device",
        default=None,
        metavar="DEV",
        help=(
            "device, by the library's own name for it, e.g. cpu, cuda:0, "
            "device1 (array_api_strict), or a CUDA device id for cupy"
        ),
    )
    parser.add_argument("--version", action="version", version=f"eyelike {__version__}")
    return parser


def _device(xp: Any, backend: str, text: str | None) -> Any:
    """The device ``--device`` names: a CUDA device id for CuPy; else the
    namespace's own device of that name where its inspection API lists one
    (array-api-strict's ``device1`` is the object it prints as
    ``array_api_strict.Device('device1')``); else the text, for the
    library to read (``cuda:0`` for torch, ``cpu`` for JAX)."""
    if text is None:
        return None
    if backend == "cupy" and text.isdigit():
        return int(text)
    info = getattr(xp, "__array_namespace_info__", None)
    devices = info().devices() if callable(info) else []
    for device in devices:
        if text in (str(device), repr(device)) or repr(device).endswith(f"({text!r})"):
            return device
    return text


def _printable(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``a``, with ml_dtypes' types (bfloat16, float8, int4, ...) widened:
    NumPy prints their values without a decimal point, so a float8 eye
    reads as ``1 0 0``, like an integer one."""
    if not is_ml_dtype(a.dtype):
        return a
    # 0 and 1 are exact in every type eyelike makes, and in the wider one
    # (complex32's imaginary part too: widened to complex64, not dropped).
    name = a.dtype.name
    wide = (
        np.int64 if "int" in name else np.complex64 if "complex" in name else np.float32
    )
    return a.astype(wide)


def _show(result: Any) -> str:
    """A header line (shape, dtype, library), then the values as NumPy
    prints them, or as their own library does where NumPy cannot hold them
    (meta tensors, shapes NumPy cannot make)."""
    backend = _registry.backend_of_array(result, "result")
    dtype = dtype_name(result.dtype) or str(result.dtype)
    shape = tuple(int(d) for d in result.shape)
    header = f"# shape {shape}, dtype {dtype}, {backend.name}"
    try:
        values = _printable(backend.to_numpy(result))
    except Exception:  # any conversion failure: show it natively
        return f"{header}\n{result}"
    if values.dtype.name != dtype:
        header += f" (values shown as {values.dtype.name})"
    return f"{header}\n{values}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success; 141 (128 + SIGPIPE, as a tool that signal stops)
        where the reader of the output closed it early, without a message.
        A usage error prints the usage and one
        ``eyelike: error: ...`` line naming the argument, and exits with
        status 2 (``SystemExit``).
    """
    words = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if words[:1] == ["bench"]:
        # It was a subcommand before the benchmark left the package.
        parser.error(
            "the benchmark is not part of the installed package: from a "
            "checkout of eyelike, run nox -s bench (or python -m benchmarks)"
        )
    args = parser.parse_args(words)
    try:
        xp = importlib.import_module(LIBRARIES[args.backend])
    except ImportError as exc:
        parser.error(f"backend {args.backend} is not installed ({exc})")
    # A GPU library without a usable device is the API's ValueError below,
    # in the same words (`no_usable_device`): nothing to check first here.
    try:
        result = eye(
            args.rows,
            args.cols,
            k=args.k,
            batch_shape=tuple(args.batch_shape),
            dtype=args.dtype,
            device=_device(xp, args.backend, args.device),
            xp=xp,
        )
    except (TypeError, ValueError, MemoryError) as exc:
        parser.error(str(exc))
    try:
        print(_show(result), flush=True)
    except BrokenPipeError:
        # The reader closed early (``eyelike 3 | head -1``): quietly, as a
        # command-line tool stopped by SIGPIPE, with its status. stdout goes
        # to devnull, or Python's own flush at exit would fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return _BROKEN_PIPE
    return 0
