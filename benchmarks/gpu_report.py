"""The GPU table's bookkeeping: which cases the time limit leaves out, the
rows, the text table and the JSON file."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

from .cases import GpuCase
from .gpu_cupy import Lib

__all__ = [
    "OUT_OF_TIME",
    "line",
    "not_run_cases",
    "row",
    "run_cases",
    "table",
    "write_json",
]

OUT_OF_TIME = "not run: out of time"


def run_cases(
    cases: list[GpuCase],
    run_case: Callable[[GpuCase, Callable[[], bool]], list[dict[str, Any]]],
    not_run: Callable[[GpuCase, str], list[dict[str, Any]]],
    *,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    on_case: Callable[[GpuCase, list[dict[str, Any]], float], None] | None = None,
) -> list[dict[str, Any]]:
    """Run ``cases`` in order until ``deadline`` (a time of ``clock``).

    A case starts only if the time left covers its guessed duration
    (`_guess`); otherwise ``not_run(case, note)`` makes its rows, whose note
    starts with `OUT_OF_TIME`. ``run_case(case, out_of_time)`` runs one
    case, and cuts its rounds short once ``out_of_time()`` is true. After
    every case, run or not, ``on_case(case, its rows, seconds)`` is called
    (to print the rows and write the file so far). Returns every row.
    """
    rows: list[dict[str, Any]] = []
    took: dict[tuple[Any, ...], float] = {}

    def out_of_time() -> bool:
        return deadline is not None and clock() >= deadline

    for case in cases:
        t0 = clock()
        if deadline is not None:
            left, guess = deadline - t0, _guess(case, took)
            if left <= 0 or left < guess:
                note = f"{OUT_OF_TIME} ({max(left, 0):.0f} s left"
                note += f", about {guess:.0f} s needed)" if guess else ")"
                case_rows = not_run(case, note)
                rows.extend(case_rows)
                if on_case is not None:
                    on_case(case, case_rows, 0.0)
                continue
        case_rows = run_case(case, out_of_time)
        seconds = clock() - t0
        key = _kind(case)
        took[key] = max(took.get(key, 0.0), seconds)
        rows.extend(case_rows)
        if on_case is not None:
            on_case(case, case_rows, seconds)
    return rows


def _kind(case: GpuCase) -> tuple[Any, ...]:
    """Cases of one kind take about as long (outputs of 256 MiB to 1 GiB
    take about the same number of timings' worth of GPU time)."""
    return (case.libs, case.peers, case.per_matrix, case.rounds)


def _guess(case: GpuCase, took: dict[tuple[Any, ...], float]) -> float:
    """Seconds a case will likely take: a fifth more than the longest case
    of its kind so far, else than the longest so far, else 0 (the first
    case always starts)."""
    same = took.get(_kind(case))
    if same is not None:
        return 1.2 * same
    return 1.2 * max(took.values(), default=0.0)


def text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def row(case: GpuCase, lib: Lib, peer: str, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "backend": lib.name,
        "case": case.name,
        "peer": peer,
        "per_call_us": None,
        "latency_us": None,
        "GB_per_s": None,
        "x_limit": None,
        "pct_of_zeros": None,
        "x_eyelike": None,
        "calls": None,
        "rounds": None,
        "sm_clock_mhz": None,
        "timing": lib.timing,
        "stream_check": lib.stream_check,
        "error": None,
        "note": None,
    }
    row.update(values)
    return row


def not_run_cases(rows: list[dict[str, Any]]) -> list[str]:
    """The cases that the time limit left out, in order, as "case on
    library" (one case can run on CuPy early and on torch later)."""
    names: list[str] = []
    for r in rows:
        name = f"{r['case']} on {r['backend']}"
        if (r["note"] or "").startswith(OUT_OF_TIME) and name not in names:
            names.append(name)
    return names


def write_json(path: str, rows: list[dict[str, Any]], complete: bool) -> None:
    """Write the rows so far to ``path`` at once (a new file moved over the
    old), so that a run killed at any moment leaves a whole JSON file."""
    part = f"{path}.part"
    with open(part, "w", encoding="utf-8") as f:
        json.dump(
            {"complete": complete, "cases_not_run": not_run_cases(rows), "rows": rows},
            f,
            indent=1,
        )
    os.replace(part, path)


def table(rows: list[dict[str, Any]]) -> str:
    """The GPU rows as a fixed-width text table, after how they were made."""
    if not rows:
        return "no rows"
    first = rows[0]
    lines = [
        f"device: {first['device']}, max SM clock {first['max_sm_clock_mhz']} MHz, "
        f"seed {first['seed']}",
    ]
    if first["not_run"]:
        lines.append(f"not run: {first['not_run']}")
    seen: set[str] = set()
    for r in rows:
        if r["backend"] not in seen:
            seen.add(r["backend"])
            lines.append(f"{r['backend']}: {r['timing']}; streams: {r['stream_check']}")
    lines.append(
        f"{'case':<{_CASE_W}} {'peer':<{_PEER_W}} {'per call':>11} {'latency':>10} "
        f"{'GB/s':>7} {'x limit':>7} {'% zeros':>7} {'x eyelike':>9} "
        f"{'SM MHz':>6}"
    )
    lines.extend(line(r) for r in rows)
    skipped = not_run_cases(rows)
    if skipped:
        lines.append(f"{len(skipped)} case(s) {OUT_OF_TIME}: {', '.join(skipped)}")
    return "\n".join(lines)


_CASE_W = 32
_PEER_W = 30


def line(r: dict[str, Any]) -> str:
    """One row of the table."""
    head = f"{r['case']:<{_CASE_W}} {r['peer']:<{_PEER_W}}"
    if r["error"] is not None:
        return f"{head} ERROR {r['error']}"
    if r["per_call_us"] is None:
        return f"{head} {r['note']}"
    line = (
        f"{head} {r['per_call_us']:>8.2f} us {r['latency_us']:>7.1f} us "
        f"{r['GB_per_s']:>7.1f} {_fmt(r['x_limit']):>7} "
        f"{_fmt(r['pct_of_zeros'], '.0f'):>7} {_fmt(r['x_eyelike']):>9} "
        f"{r['sm_clock_mhz'] or '-':>6}"
    )
    return f"{line}  ({r['note']})" if r["note"] else line


def _fmt(ratio: float | None, spec: str = ".2f") -> str:
    return "-" if ratio is None else format(ratio, spec)


def percent(x_limit: float | None) -> float | None:
    """A time ratio to the limit as a share of its throughput, in percent."""
    return None if not x_limit else 100.0 / x_limit
