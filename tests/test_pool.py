"""The NumPy backend's thread pool survives fork() and interpreter shutdown."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHILD_AFTER_FORK = """
import os, sys, numpy as np, eyelike
def big():  # an out of 34 MB with short rows: split over the pool
    return dict(batch_shape=2100, out=np.ones((2100, 64, 64), np.float32))
assert eyelike.eye(64, **big()).sum() == 2100 * 64  # builds the pool
pid = os.fork()
if pid == 0:
    ok = eyelike.eye(64, k=1, **big()).sum() == 2100 * 63
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""

AT_EXIT = """
import atexit, numpy as np, eyelike
def late():
    out = np.ones((2100, 64, 64), np.float32)  # 34 MB, short rows: the pool
    assert eyelike.eye(64, batch_shape=2100, out=out).sum() == 2100 * 64
    print("late call ok")
atexit.register(late)
eyelike.eye(64, batch_shape=2100, out=np.ones((2100, 64, 64), np.float32))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="fork() is POSIX-only")
def test_forked_child_does_not_hang() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD_AFTER_FORK], timeout=60, capture_output=True
    )
    assert done.returncode == 0, done.stderr


def test_call_during_interpreter_shutdown() -> None:
    done = subprocess.run(
        [sys.executable, "-c", AT_EXIT], timeout=60, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "late call ok" in done.stdout
