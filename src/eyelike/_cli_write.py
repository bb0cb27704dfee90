"""The command line's output, written block by block as `write` receives
them: NumPy's ``.npy`` and ``.npz``, text as ``np.loadtxt`` reads it, and
the printed view with every value; to standard output, or to a file
replaced atomically once its disk is known to have room.

The checks raise `Refused` (a usage error, exit 2) before anything is
written; a failed write is an ``OSError`` for the caller (exit 1).
"""

from __future__ import annotations

import contextlib
import errno
import io
import itertools
import math
import os
import shutil
import stat
import sys
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from ._validate.dtypes import is_ml_dtype

__all__ = ["BINARY", "FORMATS", "Refused", "chosen_format", "widened", "write"]

FORMATS = ("npy", "npz", "txt", "csv")
BINARY = ("npy", "npz")


class Refused(ValueError):
    """A request the command line refuses before writing anything."""


def chosen_format(output: str | None, fmt: str | None) -> str | None:
    """The format to write: ``fmt``, else ``output``'s suffix; None for the
    printed view. Refuses a directory, an unknown suffix, and binary to
    standard output where it is a terminal or takes text only."""
    path = None if output in (None, "-") else output
    if path is not None and os.path.isdir(path):
        example = os.path.join(path, "eye." + (fmt or "npy"))
        msg = f"{path!r} is a directory; give a file name, e.g. {example}"
        raise Refused(msg)
    if fmt is None and output == "-":
        # No name to read a format from, and no one format is the obvious
        # choice for a pipe: the reader says.
        msg = "-o - (standard output) needs a format: add --format npy, npz, txt or csv"
        raise Refused(msg)
    if fmt is None and path is not None:
        fmt = Path(path).suffix.lower().lstrip(".")
        if fmt not in FORMATS:
            what = f"suffix .{fmt}" if fmt else "no suffix"
            msg = (
                f"cannot tell the format of {path!r} ({what}): name the file "
                f".npy, .npz, .txt or .csv, or choose one with --format npy|npz|txt|csv"
            )
            raise Refused(msg)
    if path is None and fmt in BINARY:
        if sys.stdout.isatty():
            msg = (
                f"--format {fmt} is binary, and standard output is a terminal: "
                f"redirect it (> eye.{fmt}), pipe it, or write a file with -o eye.{fmt}"
            )
            raise Refused(msg)
        if getattr(sys.stdout, "buffer", None) is None:  # io.StringIO
            msg = f"--format {fmt} is binary, and standard output takes text only here"
            raise Refused(msg)
    return fmt


def widened(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``values``, an ml_dtypes type (which NumPy prints without a decimal
    point: a float8 eye would read as ``1 0 0``) widened to one holding the
    same numbers: int64, complex64 for complex32, else float32."""
    if not is_ml_dtype(values.dtype):
        return values
    name = values.dtype.name
    wide = (
        np.int64 if "int" in name else np.complex64 if "complex" in name else np.float32
    )
    return values.astype(wide)


def write(
    blocks: Iterable[np.ndarray[Any, Any]],
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    header: str,
    fmt: str | None,
    path: str | None,
) -> None:
    """Write the eye of ``shape`` (``blocks``: its values in order, whole
    matrices or rows of one; ``dtype``: theirs `widened`) as ``fmt`` (None:
    the printed view) to ``path`` (None: standard output), each block
    before the next is made."""
    blocks = map(widened, blocks)
    if fmt in BINARY:
        head = io.BytesIO()  # np.save's header
        info = np.lib.format.header_data_from_array_1_0(np.empty(0, dtype))
        np.lib.format.write_array_header_1_0(head, info | {"shape": shape})
        size = head.tell() + math.prod(shape) * dtype.itemsize
        # Bytes without a copy: uint8, as zlib's crc32 takes no complex.
        data = (np.ascontiguousarray(b).reshape(-1).view(np.uint8) for b in blocks)
        pieces: Iterator[Any] = itertools.chain([head.getvalue()], data)
    else:
        delimiter = "," if fmt == "csv" else " "
        rows = (_text(block, delimiter) for block in blocks)
        text = _view(blocks, shape, dtype) if fmt is None else rows
        pieces = (p.encode("ascii") for p in itertools.chain([header + "\n"], text))
        # 0 and 1 are as long as each other in every dtype.
        cell = len(_text(np.zeros((1, 1), dtype), " "))
        size = len(header) + 1 + math.prod(shape) * cell

    def put(f: Any) -> None:
        if fmt != "npz":
            f.writelines(pieces)
            return
        # One stored entry, as np.savez writes it; ZIP64, its size unknown.
        with (
            zipfile.ZipFile(f, "w") as archive,
            archive.open("eye.npy", "w", force_zip64=True) as entry,
        ):
            entry.writelines(pieces)

    if path is not None:
        _replace(path, put, size)
        return
    sys.stdout.flush()
    if getattr(sys.stdout, "buffer", None) is None:  # io.StringIO: text only
        sys.stdout.writelines(piece.decode() for piece in pieces)
    else:
        put(sys.stdout.buffer)
    sys.stdout.flush()


def _text(values: np.ndarray[Any, Any], delimiter: str) -> str:
    """The rows of ``values`` as text: integers and bools as integers,
    floats as decimals that read back as the same value, complex as
    ``(re+imj)``, as ``np.loadtxt`` reads it."""
    if values.size == 0:
        return ""  # not blank lines
    if values.dtype.kind == "b":
        values = values.view(np.uint8)
    cell = _complex if values.dtype.kind == "c" else str
    rows = values.reshape(-1, values.shape[-1]).tolist()
    return "".join(delimiter.join(map(cell, row)) + "\n" for row in rows)


def _complex(value: Any) -> str:
    # str of a float (or a long double) is its shortest exact text.
    real, imag = str(value.real), str(value.imag)
    return f"({real}{'' if imag.startswith('-') else '+'}{imag}j)"


def _view(
    blocks: Iterable[np.ndarray[Any, Any]], shape: tuple[int, ...], dtype: np.dtype[Any]
) -> Iterator[str]:
    """Every value, row by row, as ``print`` shows the whole array with no
    value elided: NumPy's brackets, line width and blank lines, and its
    text of 0 and 1 in such an array."""
    if not math.prod(shape):
        yield "[]\n"
        return
    zero, one = np.array2string(np.array([0, 1], dtype), separator="|")[1:-1].split("|")
    depth, (n_rows, n_cols), batch = len(shape), shape[-2:], shape[:-2]
    # NumPy wraps where a line, indented to the row's depth, would pass
    # 75 - depth characters.
    per_line = max(1, (76 - 2 * depth) // (len(zero) + 1))
    wrap = "\n" + " " * depth
    done = 0  # rows written
    for block in blocks:
        lines = []
        for row in (block.reshape(-1, n_cols) != 0).tolist():
            matrix, at = divmod(done, n_rows)
            done += 1
            cells = [one if v else zero for v in row]
            text = wrap.join(
                " ".join(cells[i : i + per_line]) for i in range(0, n_cols, per_line)
            )
            # A matrix's first row opens it and each batch dimension starting
            # there; its last row closes them, then a blank line each.
            opens = 1 + _starts(matrix, batch) if at == 0 else 0
            lead = " " * (depth - 1 - opens) + "[" * opens
            tail = "\n"
            if at == n_rows - 1:
                closes = 1 + _starts(matrix + 1, batch)
                tail = "]" * closes + "\n" * (1 if closes == depth - 1 else closes + 1)
            lines.append(f"{lead}[{text}]{tail}")
        yield "".join(lines)


def _starts(matrix: int, batch: tuple[int, ...]) -> int:
    """How many of the last batch dimensions are at index 0 at ``matrix``."""
    return sum(matrix % math.prod(batch[i:]) == 0 for i in range(len(batch)))


def _replace(path: str, put: Callable[[IO[bytes]], None], size: int) -> None:
    """Write ``path`` through ``put`` into a new file beside it, renamed over
    it when complete (a failed write leaves the old file), after checking
    that its disk has ``size`` bytes free."""
    try:
        old: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        old = None
    mode = None if old is None else old.st_mode
    if mode is not None and not stat.S_ISREG(mode):  # /dev/null, a FIFO
        with open(path, "wb") as f:
            put(f)
        return
    target = os.path.realpath(path)  # a symlink's file is replaced, as open() does
    if old is not None and not os.access(target, os.W_OK):
        # As open() refuses it: a rename would replace a file it may not write.
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
    folder, name = os.path.split(target)
    free = shutil.disk_usage(folder).free
    if size > free:
        msg = f"it needs {size:,} bytes, and its disk has {free:,} bytes free"
        raise OSError(errno.ENOSPC, msg)
    # Named first, then made (O_EXCL: never another's file), so that a stop
    # anywhere inside the try removes it, and only it.
    # (A long name's start only: a name has at most 255 bytes.)
    stem = os.fsencode(name)[:200].decode(errors="ignore")
    temporary = os.path.join(folder, f".{stem}.{os.urandom(6).hex()}.tmp")
    # The mode open() gives a new file (0666 less the umask), or the old
    # file's: never wider while written.
    made = 0o666 if mode is None else stat.S_IMODE(mode)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        with os.fdopen(os.open(temporary, flags, made), "wb") as f:
            put(f)
            f.flush()
            os.fsync(f.fileno())  # a crash leaves the old file or the new one
        if old is not None:
            # Its owner, as far as this user may set it (first: a chown may
            # clear set-id bits), then exactly its mode (the umask left out).
            with contextlib.suppress(OSError):
                os.chown(temporary, old.st_uid, old.st_gid)
            os.chmod(temporary, stat.S_IMODE(old.st_mode))
        os.replace(temporary, target)
    except FileExistsError:
        raise  # (not made here)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
