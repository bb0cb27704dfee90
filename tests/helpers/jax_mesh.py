"""The JAX mesh checks, run in a process of their own with four host devices
(``python -m helpers.jax_mesh``: XLA reads its device count once, and the
suite's process has two). Each case builds one eye on a mesh of four
devices and prints, as one JSON line, what JAX says of it and of the
reference it must match (``tests/backends/test_jax_mesh.py`` judges them):

- ``eye_like(x)``: the reference is ``jnp.zeros_like(x)`` in the same mode
  (eager, or under ``jax.jit``), as the library keeps a sharding;
- ``eye(..., device=sharding)``: the reference is the sharding asked for.

A case is (mesh axis type, mode, entry, k, x's spec): x is (8, 8, 8) split
along the batch (``P('x')``) or the rows (``P(None, 'x')``); k is a Python
int, a per-matrix list, or a JAX array sharded ``P('x')`` (under ``jit``,
passed as an argument: a tracer).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from typing import Any

DEVICES = 4
SHAPE = (8, 8, 8)
LIST_K = [0, 1, 2, -1, 3, -8, 9, 0]  # (past the bounds too: -8, 9)
SHARDED_K = [-2, -1, 0, 1, 2, -2, -1, 0]

# (axis type, mode, entry, k, x's spec)
CASES: list[tuple[str, str, str, str, str]] = [
    *itertools.product(
        ("Explicit", "Auto"),
        ("eager", "jit"),
        ("eye_like", "eye"),
        ("scalar", "list", "sharded"),
        ("batch",),
    ),
    # A k sharded along the axis that splits the rows: JAX's own broadcast
    # of the two would put one mesh axis on two dimensions.
    *itertools.product(
        ("Explicit", "Auto"), ("eager", "jit"), ("eye_like",), ("sharded",), ("rows",)
    ),
]


def case_id(case: tuple[str, ...]) -> str:
    return "-".join(case)


def _spec(sharding: Any, ndim: int) -> list[Any]:
    """A sharding's spec, one entry per dimension (None: not split)."""
    spec = list(getattr(sharding, "spec", ()))
    spec += [None] * (ndim - len(spec))
    return [list(e) if isinstance(e, tuple) else e for e in spec]


def _layout(array: Any) -> dict[str, Any]:
    """Where ``array`` lives: its spec and each device's shard shape."""
    shards = sorted(array.addressable_shards, key=lambda s: s.device.id)
    return {
        "spec": _spec(array.sharding, array.ndim),
        "shards": [list(s.data.shape) for s in shards],
        "devices": [s.device.id for s in shards],
    }


def _full_size(f: Any, *args: Any) -> int:
    """How many arrays of the whole output's shape the compiled (and
    partitioned) program holds: 0 where each device makes only its shard."""
    import jax

    text = jax.jit(f).lower(*args).compile().as_text()
    return int(text.count("[" + ",".join(map(str, SHAPE)) + "]"))


def run_case(case: tuple[str, str, str, str, str]) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    import eyelike
    from helpers import reference

    axis, mode, entry, k_kind, split = case
    mesh = jax.make_mesh((DEVICES,), ("x",), axis_types=(getattr(AxisType, axis),))
    spec = P("x") if split == "batch" else P(None, "x")
    sharding = NamedSharding(mesh, spec)
    record: dict[str, Any] = {"id": case_id(case)}
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.zeros(SHAPE, jnp.float32), sharding)
        k: Any = {"scalar": 1, "list": LIST_K}.get(k_kind)
        if k_kind == "sharded":
            k = jax.device_put(jnp.asarray(SHARDED_K), NamedSharding(mesh, P("x")))
        if entry == "eye_like":

            def ours(x: Any, k: Any) -> Any:
                return eyelike.eye_like(x, k=k)

            def want(x: Any, k: Any) -> Any:
                return jnp.zeros_like(x)

        else:

            def ours(x: Any, k: Any) -> Any:
                return eyelike.eye(
                    *SHAPE[1:], batch_shape=SHAPE[0], k=k, xp=jnp, device=sharding
                )

            want = None
        # Under jit a JAX k is an argument (a tracer); a Python k is static.
        traced = (x, k) if k_kind == "sharded" else (x,)

        def call(f: Any) -> Any:
            if mode == "eager":
                return f(x, k)
            if k_kind == "sharded":
                return jax.jit(f)(x, k)
            return jax.jit(lambda x: f(x, k))(x)

        result = call(ours)
        record["ours"] = _layout(result)
        values = reference(
            (SHAPE[0],), SHAPE[1], SHAPE[2], k if k_kind != "sharded" else SHARDED_K
        )
        record["values"] = bool(np.array_equal(np.asarray(result), values))
        if want is None:
            record["want"] = {
                "spec": _spec(sharding, len(SHAPE)),
                "shards": [list(sharding.shard_shape(SHAPE))] * DEVICES,
                "devices": sorted(d.id for d in sharding.device_set),
            }
        else:
            record["want"] = _layout(call(want))
        if mode == "jit":
            f = ours if k_kind == "sharded" else (lambda x: ours(x, k))
            record["ours_full"] = _full_size(f, *traced)
            if want is not None:
                record["want_full"] = _full_size(lambda x: want(x, k), x)
    return record


def main() -> int:
    import jax

    if len(jax.devices()) != DEVICES:
        print(json.dumps({"error": f"{len(jax.devices())} devices, not {DEVICES}"}))
        return 1
    for case in CASES:
        try:
            record = run_case(case)
        except Exception as exc:  # one case's error, reported as its result
            record = {"id": case_id(case), "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    # Before JAX is imported (it reads them once); the suite's own count
    # (tests/conftest.py) is inherited, and replaced.
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={DEVICES}"
    os.environ["JAX_PLATFORMS"] = "cpu"
    sys.exit(main())
