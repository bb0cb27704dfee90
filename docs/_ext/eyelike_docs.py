"""Two directives that keep pages in step with the code and its results.

``.. eyelike-help:: eyelike`` (or ``python -m benchmarks``): the command's
``--help``, as the command prints it, in a literal block, so the reference
never drifts from the parser it documents.

``.. bench-table:: ../bench-cpu.json``: the rows of a ``python -m
benchmarks --json`` file as a table, so the page shows the same run as the plot beside
it, and a regenerated file needs no edit of the page.
"""

from __future__ import annotations

import json
import os
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def _help(command: str) -> str:
    if command == "eyelike":
        from eyelike._cli import _parser
    elif command == "python -m benchmarks":
        from benchmarks.__main__ import _parser
    else:
        msg = f"eyelike-help: unknown command {command!r}"
        raise ValueError(msg)
    # argparse wraps to the terminal's width: the page gets 80 columns
    # whatever terminal built it, and no colour codes.
    saved = {name: os.environ.get(name) for name in ("COLUMNS", "NO_COLOR")}
    os.environ.update(COLUMNS="80", NO_COLOR="1")
    try:
        return _parser().format_help()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class EyelikeHelp(SphinxDirective):
    """The ``--help`` text of ``eyelike`` or ``python -m benchmarks``."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        text = _help(self.arguments[0]).rstrip()
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def _time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    return f"{seconds * 1e3:.2f} ms"


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _table(header: list[str], rows: list[list[str]], classes: list[str]) -> nodes.table:
    """A docutils table of plain text cells (no markup is parsed in them:
    a peer named ``diagonal.fill_`` stays as it is)."""
    group = nodes.tgroup(cols=len(header))
    group += [nodes.colspec(colwidth=1) for _ in header]
    head, body = nodes.thead(), nodes.tbody()
    for cells, part in [(header, head)] + [(r, body) for r in rows]:
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(cell, cell)
            row += entry
        part += row
    group += [head, body]
    table = nodes.table(classes=classes)
    table += group
    return table


class BenchTable(SphinxDirective):
    """The rows of a ``python -m benchmarks --json`` file, one table."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        relative, path = self.env.relfn2path(self.arguments[0])
        self.env.note_dependency(relative)
        with open(path, encoding="utf-8") as f:
            rows = json.load(f)["rows"]
        cells = []
        previous = None
        for r in rows:
            # The case once, on its first row: the table reads in groups.
            case = "" if r["case"] == previous else r["case"]
            previous = r["case"]
            cells.append(
                [
                    case,
                    r["peer"],
                    _time(r["median_s"]),
                    f"{r['GB_per_s']:.2f}",
                    _ratio(r["x_limit"]),
                    _ratio(r["x_eyelike"]),
                    _ratio(r.get("x_idiom")),
                ]
            )
        header = ["case", "peer", "median", "GB/s", "x limit", "x eyelike", "x idiom"]
        return [_table(header, cells, ["bench-table"])]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("eyelike-help", EyelikeHelp)
    app.add_directive("bench-table", BenchTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
