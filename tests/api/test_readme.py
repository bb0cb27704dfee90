"""The README is short, its links lead somewhere, and its figures are those
of the committed benchmark runs (``docs/bench-cpu*.json``), not typed by hand.
(Its examples run as doctests in ``test_public_api.py``.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def bench_row(row: dict[str, object]) -> str:
    """A README row of the performance table, from a row of the JSON."""
    x_limit = row["x_limit"]
    x_idiom = row.get("x_idiom")
    assert x_limit is None or isinstance(x_limit, float)
    assert x_idiom is None or isinstance(x_idiom, float)
    return f"| {row['case']} | {row['peer']} | {_ratio(x_limit)} | {_ratio(x_idiom)} |"


def test_readme_is_at_most_300_lines() -> None:
    assert len(README.splitlines()) <= 300


def test_performance_rows_are_those_of_the_committed_run() -> None:
    """Bug: figures typed by hand went stale. Every row of the README's
    table is a row of docs/bench-cpu.json (or, one offset per matrix, of
    docs/bench-cpu-per-matrix.json), formatted from its values."""
    block = README.split("<!-- bench-cpu rows")[1].split("<!-- end bench-cpu rows")[0]
    rows = [line for line in block.splitlines() if line.startswith("| ")][2:]
    assert len(rows) >= 5, block
    data = [
        row
        for name in ("bench-cpu.json", "bench-cpu-per-matrix.json")
        for row in json.loads((REPO / "docs" / name).read_text())["rows"]
    ]
    made = {bench_row(r) for r in data}
    for line in rows:
        assert line in made, line


def test_gpu_figures_are_those_of_the_committed_run() -> None:
    """The README's GPU sentence quotes docs/bench-gpu.json: the range of
    eyelike's time over ``cupy.zeros``'s with one k per call (every dtype,
    256 MiB and more), of ``zeros`` + diagonal fill over eyelike on CuPy,
    and of the per-matrix idioms' times over eyelike's."""
    data = json.loads((REPO / "docs" / "bench-gpu.json").read_text())["rows"]
    rows = [r for r in data if r["x_eyelike"] is not None]  # not the cases not run

    def span(values: list[float], digits: int) -> str:
        return f"{min(values):.2f}-{max(values):.{digits}f}"

    diag = [r["x_eyelike"] for r in rows if r["peer"] == "cupy.zeros+diagonal fill"]
    per_matrix = [
        r["x_eyelike"]
        for r in rows
        if "k=b%" in r["case"] and r["backend"] == "cupy" and "(limit)" not in r["peer"]
        and r["peer"] != "eyelike"
    ]  # fmt: skip
    limit = [
        r["x_limit"]
        for r in rows
        if r["backend"] == "cupy" and r["peer"] == "eyelike" and "k=" not in r["case"]
        and r["GB_per_s"] and r["per_call_us"] * r["GB_per_s"] * 1e3 > 0.99 * 2**28
    ]  # fmt: skip
    assert len(limit) == 17  # 15 dtypes at 256 MiB, and the two 1 GiB cases
    text = " ".join(README.split())  # the figures, however the lines break
    assert f"in {span(limit, 2)}x the time of `cupy.zeros`" in text
    assert f"takes {span(diag, 2)}x its time" in text
    assert f"beats both idioms, {span(per_matrix, 1)}x" in text


def test_local_links_lead_to_files() -> None:
    links = re.findall(r"\]\(([^)#:]+)\)", README)
    assert links
    missing = [link for link in links if not (REPO / link).exists()]
    assert not missing


# Paths the pages name that are examples, not files of the repository.
_EXAMPLES = {"src/eyelike/_backends/mylib.py"}
_PATH = re.compile(
    r"(?<![\w/.])((?:tests|src|benchmarks|scripts|kernels|docs|requirements)/"
    r"[\w./-]*\.(?:py|cpp|cuh|cu|sh|json|png|txt|md|rst))"
)


def test_paths_the_pages_name_exist() -> None:
    """Bug (review): pages named files that had moved (tests/kernel_build.py,
    benchmarks/test_cpu.py). Every repository path the README, the
    benchmark's README and the documentation name exists."""
    pages = [REPO / "README.md", REPO / "benchmarks" / "README.md"]
    pages += [*REPO.glob("docs/*.rst"), *REPO.glob("docs/guide/*.*")]
    missing = [
        f"{page.relative_to(REPO)}: {path}"
        for page in pages
        for path in _PATH.findall(page.read_text(encoding="utf-8"))
        if path not in _EXAMPLES and not (REPO / path).exists()
    ]
    assert not missing
