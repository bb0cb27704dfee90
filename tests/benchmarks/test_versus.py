"""``python -m benchmarks.versus``: another revision's eyelike imported beside
this one, and both timed on the same calls. Nothing here is a timing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks import versus

import eyelike


def _in_git_checkout() -> bool:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=versus.ROOT, capture_output=True
        )
    except OSError:
        return False
    return done.returncode == 0


pytestmark = pytest.mark.skipif(
    not _in_git_checkout(), reason="needs git and a checkout of the repository"
)


def test_the_other_revision_is_a_package_of_its_own(tmp_path: Path) -> None:
    old = versus.unpack("HEAD", tmp_path)
    try:
        assert old.__name__ == "eyelike_versus"
        assert old is not eyelike
        assert Path(old.__file__).is_relative_to(tmp_path)
        # Both build the same matrix, each with its own code.
        assert (old.eye(3, k=1) == eyelike.eye(3, k=1)).all()
        both = versus.cases(old, {"numpy"}), versus.cases(eyelike, {"numpy"})
        assert list(both[0]) == list(both[1])
        for name in both[0]:
            assert (both[0][name]() == both[1][name]()).all(), name
        # The large cases: the same calls, the same matrices.
        big = versus.large(old, {"numpy"}), versus.large(eyelike, {"numpy"})
        assert list(big[0]) == list(big[1])
        assert big[0]
        for name in big[0]:
            assert (big[0][name]() == big[1][name]()).all(), name
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("eyelike_versus")]:
            del sys.modules[name]


def test_a_run_prints_every_case(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.versus", "HEAD",
         "--only", "numpy", "--rounds", "1"],
        cwd=versus.ROOT, capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    rows = [line for line in done.stdout.splitlines() if not line.startswith("#")]
    # Five small calls and four collate sizes against the revision; two
    # against the library's own call (each at the revision too).
    assert len(rows) == 11, done.stdout
    assert all(line.startswith("numpy ") for line in rows)
    assert sum("per matrix" in line for line in rows) == len(versus.COLLATE)
    assert sum("new/old" in line for line in rows) == 11
    assert sum(" own " in line and "at the revision" in line for line in rows) == 2


def test_an_unknown_revision_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(subprocess.CalledProcessError):
        versus.unpack("no-such-revision-anywhere", tmp_path)


def test_guards_are_counted() -> None:
    torch = pytest.importorskip("torch")
    counts = versus.guards(eyelike, torch)
    assert len(counts) == 5
    assert all(n > 0 for n in counts.values()), counts
