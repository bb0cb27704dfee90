"""JAX shardings on a mesh of four host devices, as the library keeps them:
``eye_like(x)`` has ``jnp.zeros_like(x)``'s sharding, eagerly and under
``jax.jit``, with Explicit and Auto mesh axes, for a scalar, a per-matrix
list and a sharded array ``k``; ``eye(..., device=sharding)`` has the
sharding asked for. Each device holds only its shard, and (under ``jit``)
the compiled program holds no array of the whole output's shape where the
output is split.

The cases run in one subprocess (``helpers/jax_mesh.py``): XLA reads its
device count once per process, and this one has two (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from helpers import jax_mesh

jax = pytest.importorskip("jax")
if not (hasattr(jax, "set_mesh") and hasattr(jax.sharding, "reshard")):
    # (JAX 0.7 made its sharding-in-types API public.)
    pytest.skip(
        "this JAX has no jax.set_mesh or jax.sharding.reshard", allow_module_level=True
    )

# The one case whose layout is not zeros_like's: under jit on Auto axes the
# compiler lays out what it computes, and a k passed in sharded is an input
# zeros_like does not have (JAX's own zeros_like(x) + k[:, None, None] is
# then replicated). It must hold no more than zeros_like's per device.
_COMPILERS = {
    jax_mesh.case_id(c)
    for c in jax_mesh.CASES
    if c[0] == "Auto" and c[1] == "jit" and c[2] == "eye_like" and c[3] == "sharded"
}


@pytest.fixture(scope="module")
def records() -> dict[str, Any]:
    """Every case's record, from one run of the checks on four devices."""
    env = dict(os.environ)
    # This process's imports (eyelike as the suite imports it, the helpers).
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run(
        [sys.executable, "-m", "helpers.jax_mesh"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    found = [json.loads(line) for line in proc.stdout.splitlines() if line]
    return {r["id"]: r for r in found}


@pytest.mark.parametrize("case", jax_mesh.CASES, ids=jax_mesh.case_id)
def test_sharding_as_the_library_keeps_it(
    case: tuple[str, ...], records: dict[str, Any]
) -> None:
    ident = jax_mesh.case_id(case)
    record = records[ident]
    assert "error" not in record, record["error"]
    assert record["values"], "not the eye's values"
    ours, want = record["ours"], record["want"]
    assert ours["devices"] == want["devices"] == list(range(jax_mesh.DEVICES))
    if ident in _COMPILERS:
        for got, limit in zip(ours["shards"], want["shards"], strict=True):
            assert _size(got) <= _size(limit), (ours, want)
    else:
        assert ours["spec"] == want["spec"], (ours, want)
        assert ours["shards"] == want["shards"], (ours, want)
    whole = list(jax_mesh.SHAPE)
    if "ours_full" in record and all(s != whole for s in ours["shards"]):
        # Split: no device makes (or holds) the whole output.
        assert record["ours_full"] == 0, record


def test_the_issue_figures(records: dict[str, Any]) -> None:
    """The issue's case: Explicit axes, (8, 8, 8) split P('x') over four
    devices, under jit: (2, 8, 8) on each device, as zeros_like's."""
    for k in ("scalar", "list", "sharded"):
        record = records[f"Explicit-jit-eye_like-{k}-batch"]
        assert record["ours"]["spec"] == ["x", None, None]
        assert record["ours"]["shards"] == [[2, 8, 8]] * 4


def _size(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
