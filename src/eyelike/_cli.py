"""The command line: ``eyelike ROWS [COLS] [-k K] [--batch-shape 2,3] ...``.

`main` checks the arguments with `eye` itself, then makes and writes the
eye a block (`BLOCK` values at most) at a time, so that an output larger
than memory streams. Its files, formats and printed view: ``_cli_write.py``.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import math
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import __version__
from . import _backends as _registry
from . import _cli_write as _write
from ._backends._base import namespace_info
from ._core import eye
from ._validate.dtypes import dtype_name

__all__ = ["main"]

BLOCK = 1 << 16
"""The most values made at once (512 KiB of float64), unless one row is more."""
# Backend name -> the module to import for it.
LIBRARIES = {cls.name: cls.namespaces[0] for cls in _registry.BACKENDS}
# A word starting with a minus and a digit ("-1,2") is a value: eyelike has
# no option of that form. Before 3.13 argparse took "-1,2" for an option.
_NEGATIVE_VALUE = re.compile(r"-\.?\d")

_USAGE = """\
%(prog)s ROWS [COLS] [-k K | -k K1,K2,...] [--batch-shape B1,B2,...]
               [--dtype NAME] [--backend LIB] [--device DEV]
               [-o FILE] [--format npy|npz|txt|csv]
       %(prog)s --version | --help"""

_DESCRIPTION = """\
Print an identity or shifted-diagonal matrix, or a batch of them: element
[..., row, col] is 1 where col - row == k, and 0 elsewhere. The first line of
the output states the shape, the dtype and the array library; bfloat16,
float8 and other ml_dtypes values are printed widened to float32 (int4 and
the like to int64). Where the output is not a terminal, no value is elided,
and the values are made and printed a block at a time, as they are written
to a file: an output larger than memory streams.

Or write it as data that NumPy reads: -o FILE takes the format from the
suffix (.npy; .npz, the array named eye; .txt or .csv text), --format
chooses it, and -o - (or --format alone) writes to standard output. Text
starts with a # line (shape, dtype, library) that np.loadtxt skips, then
each matrix's rows in turn: reshape to the shape the # line states.
Integers and bools are written as integers, floats as decimals that read
back as the same value, complex as (re+imj); bfloat16 and the other
ml_dtypes types are written as their values in text, and refused in .npy
and .npz (NumPy would read them back as raw bytes)."""

_EPILOG = """\
examples:
  eyelike 3 4 -k 1 --batch-shape 2 --dtype int32
  eyelike 3 -k -1,2 --batch-shape 2        one offset per matrix
  eyelike 4 --dtype bfloat16 --backend torch
  eyelike 3 -o eye.npy                     np.load("eye.npy")
  eyelike 3 --batch-shape 2 -o eye.npz     np.load("eye.npz")["eye"]
  eyelike 2 3 -k 1 -o eye.txt              np.loadtxt("eye.txt")
  eyelike 3 --dtype int8 -o eye.csv        np.loadtxt("eye.csv", delimiter=",")
  eyelike 3 --format csv | python -c ...   np.loadtxt(sys.stdin, delimiter=",")

Bad arguments print the usage and one error line, and exit with status 2;
a failed write (or one the disk has no room for, refused first) prints one
error line and exits with status 1; Ctrl-C (SIGINT) or SIGTERM stops it
with one line and status 130 or 143. Either way an existing file is left
as it was. A reader that closes the output early (| head) ends it quietly,
with status 141, as that signal (SIGPIPE) ends other tools."""


def _entries(text: str, what: str, example: str) -> list[int]:
    """The integers of a comma-separated list; an empty entry (2,,3) is an error."""
    values = []
    for i, part in enumerate(text.split(","), 1):
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


def _batch_shape(text: str) -> tuple[int, ...]:
    # Empty: one matrix, as when the option is left out.
    return tuple(_entries(text, "sizes", "2,3")) if text.strip() else ()


def _offset(text: str) -> int | list[int]:
    if not text.strip():
        msg = "expected an integer or a comma-separated list; got an empty value"
        raise argparse.ArgumentTypeError(msg)
    values = _entries(text, "offsets", "-1,2")
    return values[0] if len(values) == 1 else values  # one for every matrix


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="eyelike",
        usage=_USAGE,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the examples
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
        default=(),
        metavar="B1,B2,...",
        help="leading batch dimensions, e.g. 2,3 (default: one matrix)",
    )
    parser.add_argument(
        "--dtype",
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
        help=(
            f"array library to make it with: {', '.join(sorted(LIBRARIES))} "
            f"(default numpy)"
        ),
    )
    parser.add_argument(
        "--device",
        metavar="DEV",
        help=(
            "device, by the library's own name for it, e.g. cpu, cuda:0, "
            "device1 (array_api_strict), or a CUDA device id for cupy"
        ),
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=(
            "write the values to FILE instead of printing them, in the format "
            "its suffix names (.npy, .npz, .txt, .csv); - for standard output"
        ),
    )
    parser.add_argument(
        "--format",
        choices=_write.FORMATS,
        metavar="{npy,npz,txt,csv}",
        help=(
            "the format to write, whatever FILE's suffix; without -o, to "
            "standard output"
        ),
    )
    parser.add_argument("--version", action="version", version=f"eyelike {__version__}")
    return parser


def _named_device(xp: Any, backend: str, text: str | None) -> Any:
    """The device ``--device`` names: a CUDA device id for CuPy; the
    namespace's own device of that name where its inspection API lists one
    (``device1``: array-api-strict's ``Device('device1')``); else the text,
    for the library to read (``cuda:0`` for torch, ``cpu`` for JAX)."""
    if text is None:
        return None
    if backend == "cupy" and text.isdigit():
        return int(text)
    info = namespace_info(xp)
    for device in info.devices() if info is not None else []:
        if text in (str(device), repr(device)) or repr(device).endswith(f"({text!r})"):
            return device
    return text


def _blocks(
    backend: Any, shape: tuple[int, ...], request: dict[str, Any]
) -> Iterator[np.ndarray[Any, Any]]:
    """The eye of ``shape`` in order, as NumPy arrays of at most `BLOCK`
    values (or one row): whole matrices, or rows of one. Rows ``top`` on
    are the eye of ``k + top``; matrix ``m``, of offset ``m`` of a list, cycled."""
    *batch, n_rows, n_cols = shape
    k = request["k"]
    count = math.prod(batch)
    matrices = max(1, BLOCK // (n_rows * n_cols or 1))
    height = max(1, min(n_rows, BLOCK // (n_cols or 1)))
    for first in range(0, count, matrices):
        n = min(matrices, count - first)
        for top in range(0, n_rows, height):
            if isinstance(k, int):
                offsets: Any = k + top
            else:
                offsets = [k[m % len(k)] + top for m in range(first, first + n)]
            rows = min(height, n_rows - top)
            block = eye(rows, n_cols, **request | {"k": offsets, "batch_shape": n})
            yield backend.to_numpy(block)


def _write_out(args: argparse.Namespace, path: str | None) -> None:
    """Print the eye that ``args`` asks for, or write it to ``path`` (None:
    standard output); raises `_write.Refused` before anything is written,
    ``OSError`` where the write fails."""
    fmt = _write.chosen_format(args.output, args.format)
    try:
        xp = importlib.import_module(LIBRARIES[args.backend])
    except ImportError as exc:
        msg = f"backend {args.backend} is not installed ({exc})"
        raise _write.Refused(msg) from None
    n_cols = args.rows if args.cols is None else args.cols
    shape = (*args.batch_shape, args.rows, n_cols)
    device = _named_device(xp, args.backend, args.device)
    request = {"k": args.k, "batch_shape": args.batch_shape, "dtype": args.dtype}
    request |= {"device": device, "xp": xp}
    # Made whole for a terminal (its view elides) and for a stream in memory
    # (io.StringIO), under the memory rule; else every rule but the size's
    # checked on the eye with no rows, then made block by block.
    terminal = fmt is None and sys.stdout.isatty()
    whole = terminal or (path is None and not _has_fd())
    try:
        result = eye(args.rows if whole else min(args.rows, 0), n_cols, **request)
    except (TypeError, ValueError, MemoryError) as exc:
        raise _write.Refused(str(exc)) from None
    backend = _registry.backend_of_array(result, "result")
    dtype = dtype_name(result.dtype) or str(result.dtype)
    header = f"# shape {shape}, dtype {dtype}, {backend.name}"
    try:
        values = backend.to_numpy(result)
    except Exception as exc:  # a meta tensor: no values anywhere
        if fmt is not None:
            msg = (
                f"cannot write the result: its values cannot be copied to the host "
                f"({type(exc).__name__}: {exc})"
            )
            raise _write.Refused(msg) from None
        native = result if whole else eye(args.rows, n_cols, **request)
        print(f"{header}\n{native}", flush=True)  # as its own library prints it
        return
    shown = _write.widened(values)
    if shown.dtype.name != dtype:  # an ml_dtypes type, or torch's bfloat16
        if fmt is None:
            header += f" (values shown as {shown.dtype.name})"
        elif fmt in _write.BINARY:
            read = "raw bytes" if shown is not values else values.dtype.name
            msg = (
                f"--format {fmt} cannot record dtype {dtype}: NumPy has no such "
                f"type, and np.load would read back {read}. "
                f"Write text (--format txt or csv: the values as decimals), or "
                f"choose a NumPy dtype, e.g. --dtype float32"
            )
            raise _write.Refused(msg)
    if terminal:  # NumPy's summary of a long one, elided with "..."
        print(f"{header}\n{shown}", flush=True)
        return
    blocks = iter([values]) if whole else _blocks(backend, shape, request)
    # If the first block can be made, every block can (none is larger).
    try:
        first = list(itertools.islice(blocks, 1))
    except (ValueError, MemoryError) as exc:
        msg = f"cannot make the output even one row at a time: {exc}"
        raise _write.Refused(msg) from None
    _write.write(itertools.chain(first, blocks), shape, shown.dtype, header, fmt, path)


def _has_fd() -> bool:
    """Whether standard output is a file, a pipe or a device, not memory
    (io.StringIO, pytest's capture)."""
    try:
        sys.stdout.fileno()
    except (OSError, ValueError):
        return False
    return True


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
        where the reader of the output closed it early, without a message;
        130 or 143 (128 + SIGINT or SIGTERM) where one of those stopped it,
        with one line, the file being written left as it was. A usage error
        prints the usage and one ``eyelike: error: ...`` line naming the
        argument, and exits with status 2 (``SystemExit``).
    """
    words = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if words[:1] == ["bench"]:  # a subcommand before the benchmark left
        parser.error(
            "the benchmark is not part of the installed package: from a "
            "checkout of eyelike, run nox -s bench (or python -m benchmarks)"
        )
    args = parser.parse_args(words)
    path = None if args.output in (None, "-") else args.output
    stopped: list[int] = []

    def stop(signum: int, frame: Any) -> None:
        # The first signal unwinds (removing the temporary file); a second
        # must not interrupt that.
        if not stopped:
            stopped.append(signum)
            raise KeyboardInterrupt

    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            # (Not one ignored, as a shell ignores SIGINT for a background job.)
            if signal.getsignal(sig) is not signal.SIG_IGN:
                previous[sig] = signal.signal(sig, stop)
    try:
        return _run(parser, args, path)
    except BaseException:
        if not stopped:
            raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    kept = "" if path is None else f"; {path!r} not written"
    name = signal.Signals(stopped[0]).name
    print(f"eyelike: stopped by {name}{kept}", file=sys.stderr)
    return 128 + stopped[0]


def _run(
    parser: argparse.ArgumentParser, args: argparse.Namespace, path: str | None
) -> int:
    """`main` once the signals are caught: a refusal is a usage error; a
    failed write, one line with the system's reason and status 1."""
    try:
        _write_out(args, path)
    except _write.Refused as exc:
        parser.error(str(exc))
    except OSError as exc:
        if path is None:
            # Python's flush at exit would fail again: what is left goes
            # to devnull.
            if _has_fd():
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                os.close(devnull)
            if isinstance(exc, BrokenPipeError):
                # The reader closed early (``eyelike 3 | head -1``): quietly,
                # with the status of a tool that SIGPIPE stops.
                return 128 + 13  # SIGPIPE's number
        where = "standard output" if path is None else repr(path)
        reason = exc.strerror or str(exc)  # not the temporary file's name
        print(f"eyelike: error: cannot write {where}: {reason}", file=sys.stderr)
        return 1
    return 0
