"""The command line's arguments: `parser` (its usage, help and examples,
and the reading of ``-k`` and ``--batch-shape``), and `named_device`, the
device object that ``--device`` names. Running the command: ``_cli.py``.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from . import __version__
from . import _backends as _registry
from ._cli_write import FORMATS

__all__ = ["LIBRARIES", "named_device", "parser"]

# Backend name -> the module to import for it: every library with a name.
LIBRARIES = {cls.name: cls.namespaces[0] for cls in _registry.BACKENDS}

# A word that starts with a minus and a digit ("-1", "-1,2", "-2,0,1") is a
# value, never an option: eyelike has no option of that form. Python before
# 3.13 takes "-1,2" for an unknown option ("-k: expected one argument")
# because only plain numbers such as "-1" or "-1.5" count as negative.
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
as it was."""


def parser() -> argparse.ArgumentParser:
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
        choices=FORMATS,
        metavar="{npy,npz,txt,csv}",
        help=(
            "the format to write, whatever FILE's suffix; without -o, to "
            "standard output"
        ),
    )
    parser.add_argument("--version", action="version", version=f"eyelike {__version__}")
    return parser


def named_device(xp: Any, backend: str, text: str | None) -> Any:
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
