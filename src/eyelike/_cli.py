"""The command line: ``eyelike ROWS [COLS] [-k K] [--batch-shape 2,3] ...``.

`main` checks the arguments with `eye` itself, then makes the eye block by
block (whole matrices, or a block of one matrix's rows: `BLOCK` values at
most) and prints or writes each block before it makes the next, so an
output larger than memory streams to a pipe or a file. SIGINT and SIGTERM
stop it with one line (the temporary file removed). Its arguments (the
parser, the help text, the device ``--device`` names): ``_cli_args.py``;
its ``--output`` files, formats and the printed view: ``_cli_write.py``.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import math
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import _backends as _registry
from . import _cli_write as _write
from ._cli_args import LIBRARIES, named_device
from ._cli_args import parser as _parser  # the name the docs' --help page imports
from ._core import eye
from ._validate.dtypes import dtype_name

__all__ = ["main"]

BLOCK = 1 << 16
"""The most values made at once (512 KiB of float64), unless one row is more."""
# Exit status where the output's reader closed it early.
_BROKEN_PIPE = 128 + 13


def _blocks(
    backend: Any, shape: tuple[int, ...], request: dict[str, Any]
) -> Iterator[np.ndarray[Any, Any]]:
    """The eye of ``shape`` in order, as NumPy arrays of at most `BLOCK`
    values (or one row): whole matrices, or rows of one. Rows ``top`` on of
    a matrix are the eye of ``k + top``; matrix ``m`` takes offset ``m`` of
    a list, cycled (a list is one offset per index of the last batch
    dimension, broadcast)."""
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
    standard output); raises ``Refused`` before anything is written, and an
    ``OSError`` where the write fails."""
    fmt = _write.chosen_format(args.output, args.format)
    if fmt is not None:
        _write.check_target(path, fmt, sys.stdout)
    try:
        xp = importlib.import_module(LIBRARIES[args.backend])
    except ImportError as exc:
        msg = f"backend {args.backend} is not installed ({exc})"
        raise _write.Refused(msg) from None
    # (A GPU library without a usable device is the API's ValueError, in
    # the same words: nothing to check first here.)
    n_cols = args.rows if args.cols is None else args.cols
    shape = (*args.batch_shape, args.rows, n_cols)
    device = named_device(xp, args.backend, args.device)
    request = {"k": args.k, "batch_shape": tuple(args.batch_shape), "dtype": args.dtype}
    request |= {"device": device, "xp": xp}
    # Made whole for a terminal (its view elides) and for a stream that is
    # memory itself (io.StringIO), under the memory rule; else streamed,
    # with every rule but the size's checked on the eye with no rows (the
    # same columns, batch, k, dtype and device), then block by block.
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
        # Printed by its own library.
        native = result if whole else eye(args.rows, n_cols, **request)
        print(f"{header}\n{native}", flush=True)
        return
    # Widened where NumPy would print ml_dtypes' values without a decimal
    # point: a float8 eye would read as ``1 0 0``, like an integer one.
    shown = _write.widened(values)
    if fmt is None and shown.dtype.name != dtype:
        header += f" (values shown as {shown.dtype.name})"
    if terminal:  # NumPy's summary of a long one, elided with "..."
        print(f"{header}\n{shown}", flush=True)
        return
    _write.check_values(values, dtype, fmt)
    blocks = iter([values]) if whole else _blocks(backend, shape, request)
    # The first block made before anything is written: if it is made,
    # every block is (none is larger).
    try:
        first = list(itertools.islice(blocks, 1))
    except (ValueError, MemoryError) as exc:
        msg = f"cannot make the output even one row at a time: {exc}"
        raise _write.Refused(msg) from None
    blocks = itertools.chain(first, blocks)
    _write.write(blocks, shape, shown.dtype, header, fmt, path, sys.stdout)


def _has_fd() -> bool:
    """Whether standard output is a file, a pipe or a device (not memory:
    io.StringIO, pytest's capture)."""
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
    if words[:1] == ["bench"]:
        # It was a subcommand before the benchmark left the package.
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
        # (Not a signal ignored, as a shell ignores SIGINT for a job in the
        # background.)
        for sig in (signal.SIGINT, signal.SIGTERM):
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
    """`main`, once the arguments are read and the signals caught: a
    refusal is a usage error; a failed write, one line (no traceback: the
    reason is the system's: no such folder, no space left, no permission)
    and status 1."""
    try:
        _write_out(args, path)
    except _write.Refused as exc:
        parser.error(str(exc))
    except OSError as exc:
        if path is None:
            # Python's own flush at exit would fail again on a closed or
            # failing stdout: what is left for it goes to devnull.
            if _has_fd():
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                os.close(devnull)
            if isinstance(exc, BrokenPipeError):
                # The reader closed early (``eyelike 3 | head -1``): quietly,
                # as a command-line tool stopped by SIGPIPE, with its status.
                return _BROKEN_PIPE
        where = "standard output" if path is None else repr(path)
        # The system's reason, not the temporary file's name that it holds.
        reason = exc.strerror or str(exc)
        print(f"eyelike: error: cannot write {where}: {reason}", file=sys.stderr)
        return 1
    return 0
