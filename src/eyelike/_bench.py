"""``eyelike bench``: eyelike against its peers and the memory limit.

One process, one run, side by side (``eyelike bench --help`` says the same
in plain text). Every output is checked against NumPy before it is timed.
The peers of a case are timed round by round, in a new random order each
round; times are medians over the rounds, and ratios are medians of each
round's ratio, so the machine's drifting load cancels out. Ratios are to
``limit_alloc`` (a fresh ``np.empty`` filled with zeros: the cost of handing
out and writing new memory) or, for ``out=`` cases, to ``limit_touched``
(``fill(0)`` of an already-touched buffer, one core).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import math
import os
import random
import statistics
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._core import eye, eye_like
from ._registry import backend_of_array

__all__ = ["main"]


@dataclass(frozen=True)
class Case:
    """One benchmark shape."""

    batch: tuple[int, ...]
    n: int
    k: int = 0
    dtype: str = "float32"
    out: bool = False
    touch: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return (*self.batch, self.n, self.n)

    @property
    def name(self) -> str:
        dims = "x".join(map(str, self.shape))
        extra = (" out=" if self.out else "") + (" +touch" if self.touch else "")
        return f"{dims} {self.dtype} k={self.k}{extra}"

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * np.dtype(self.dtype).itemsize


def _cases() -> list[Case]:
    cases = [Case((), 3, dtype="float64"), Case((4,), 3, dtype="float64")]
    cases += [Case((4096,), 64, k) for k in (0, 1, -3)]
    cases.append(Case((), 8192, touch=True))
    for dt in ("bool", "uint8", "float16", "float64"):
        cases.append(Case((256,), 256, dtype=dt))
    cases += [Case((4096,), 64, out=True), Case((), 8192, out=True)]
    cases += [Case((256,), 256, dtype=dt, out=True) for dt in ("uint8", "float64")]
    return cases


def _touch(a: np.ndarray[Any, Any]) -> None:
    # Write every page so lazily zeroed memory is not counted as free.
    flat = a.reshape(-1)
    flat[:: max(1, 4096 // a.itemsize)] += 0


Peer = Callable[[], Any]


def _square(a: Any, k: int) -> Any:
    """The square block of ``a`` whose main diagonal is ``a``'s diagonal k."""
    r0, c0 = max(-k, 0), max(k, 0)
    n = min(a.shape[-2] - r0, a.shape[-1] - c0)
    return a[..., r0 : r0 + n, c0 : c0 + n]


def _numpy_peers(c: Case, buf: Any) -> dict[str, Peer]:
    shape, dt, k, n = c.shape, np.dtype(c.dtype), c.k, c.n
    peers: dict[str, Peer] = {}
    if c.out:
        peers["eyelike"] = lambda: eye(n, k=k, batch_shape=c.batch, out=buf)

        def zeros_diag_out() -> Any:
            buf.fill(0)
            np.einsum("...ii->...i", _square(buf, k))[...] = 1
            return buf

        peers["fill+einsum diag"] = zeros_diag_out
        peers["limit_touched"] = lambda: buf.fill(0)
        # Not a limit of the hardware: libc's memset writes faster than
        # NumPy's fill loop (which it is for 1-byte types only); shown so
        # the ratios can be read against both.
        address, nbytes = buf.ctypes.data, buf.nbytes
        peers["limit_memset (zeros only)"] = lambda: ctypes.memset(address, 0, nbytes)
        return peers
    peers["eyelike"] = lambda: eye(n, k=k, batch_shape=c.batch, dtype=dt)
    if c.nbytes < 1 << 16:
        x = np.zeros(shape, dt)
        peers["eyelike.eye_like"] = lambda: eye_like(x, k=k)
    if not c.batch:
        peers["np.eye"] = lambda: np.eye(n, n, k, dt)
    else:
        peers["np.broadcast_to(eye).copy"] = lambda: np.broadcast_to(
            np.eye(n, n, k, dt), shape
        ).copy()

    def zeros_diag() -> Any:
        a = np.zeros(shape, dt)
        np.einsum("...ii->...i", _square(a, k))[...] = 1
        return a

    peers["np.zeros+einsum diag"] = zeros_diag

    def limit_alloc() -> Any:
        a = np.empty(shape, dt)
        a.fill(0)
        return a

    peers["limit_alloc"] = limit_alloc
    return peers


def _torch_peers(c: Case) -> dict[str, Peer]:
    try:
        import torch
    except ImportError:
        return {}
    if c.out:
        return {}
    dt = getattr(torch, c.dtype)
    shape, n, k = c.shape, c.n, c.k
    peers: dict[str, Peer] = {}
    if k == 0:
        peers["torch.eye.expand.clone"] = lambda: (
            torch.eye(n, dtype=dt).expand(shape).clone()
        )

    def zeros_fill() -> Any:
        t = torch.zeros(shape, dtype=dt)
        t.diagonal(k, -2, -1).fill_(1)
        return t

    peers["torch.zeros+diagonal.fill_"] = zeros_fill
    return peers


def _jax_peers(c: Case) -> dict[str, Peer]:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {}
    if c.out or c.dtype == "float64":
        return {}
    shape, n, k, dt = c.shape, c.n, c.k, c.dtype
    fn = jax.jit(lambda: jnp.broadcast_to(jnp.eye(n, n, k, dtype=dt), shape))
    return {"jax.jit(broadcast eye)": lambda: fn().block_until_ready()}


def _on_library_peers(c: Case) -> dict[str, Peer]:
    """eyelike called on torch, JAX and array-api-strict, each beside that
    library's own best idiom for the same output: the pairs ``LIB: eyelike``
    and ``LIB: idiom`` (their ratio is the row's ``x_idiom``), eager, and
    compiled (``torch.compile``) or jitted (``jax.jit``) too."""
    if c.out:
        return {}
    peers: dict[str, Peer] = {}
    for add in (_torch_pair, _jax_pair, _strict_pair):
        with contextlib.suppress(ImportError):
            peers.update(add(c))
    return peers


def _torch_pair(c: Case) -> dict[str, Peer]:
    import torch

    dt = getattr(torch, c.dtype)
    shape, n, k, batch = c.shape, c.n, c.k, c.batch
    x = torch.empty(shape, dtype=dt)

    def idiom(x: Any) -> Any:
        if k == 0:  # torch's fastest: one eye, copied over the batch
            one = torch.eye(n, dtype=x.dtype)
            # Sizes one by one: a torch.Size costs expand ~2 us more.
            return one.expand(*x.shape).clone() if batch else one
        t = torch.zeros(x.shape, dtype=x.dtype)
        t.diagonal(k, -2, -1).fill_(1)
        return t

    def ours(x: Any) -> Any:
        return eye_like(x, k=k)

    peers: dict[str, Peer] = {
        "torch: eyelike": lambda: eye(n, k=k, batch_shape=batch, dtype=dt, xp=torch),
        "torch: eyelike.eye_like": lambda: ours(x),
        "torch: idiom": lambda: idiom(x),
    }
    if c.nbytes < 1 << 20:  # compiled: where the per-call cost shows
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's own first-compile notes
            mine = torch.compile(ours, fullgraph=True)
            theirs = torch.compile(idiom, fullgraph=True)
            mine(x), theirs(x)
        peers["torch.compile: eyelike"] = lambda: mine(x)
        peers["torch.compile: idiom"] = lambda: theirs(x)
    return peers


def _jax_pair(c: Case) -> dict[str, Peer]:
    import jax
    import jax.numpy as jnp

    if c.dtype == "float64":  # JAX's default: no 64-bit types
        return {}
    shape, n, k, batch, dt = c.shape, c.n, c.k, c.batch, c.dtype

    def ours() -> Any:
        return eye(n, k=k, batch_shape=batch, dtype=dt, xp=jnp)

    def idiom() -> Any:
        return jnp.broadcast_to(jnp.eye(n, n, k, dtype=dt), shape)

    mine, theirs = jax.jit(ours), jax.jit(idiom)
    return {
        "jax: eyelike": lambda: ours().block_until_ready(),
        "jax: idiom": lambda: idiom().block_until_ready(),
        "jax.jit: eyelike": lambda: mine().block_until_ready(),
        "jax.jit: idiom": lambda: theirs().block_until_ready(),
    }


def _strict_pair(c: Case) -> dict[str, Peer]:
    import array_api_strict as xps

    if c.nbytes >= 1 << 20:  # a reference namespace: small cases only
        return {}
    shape, n, k, batch = c.shape, c.n, c.k, c.batch
    dt = getattr(xps, c.dtype)
    return {
        "array_api_strict: eyelike": lambda: eye(
            n, k=k, batch_shape=batch, dtype=dt, xp=xps
        ),
        # A fresh array, as eyelike gives: a batch is a broadcast view to copy.
        "array_api_strict: idiom": (
            lambda: xps.asarray(
                xps.broadcast_to(xps.eye(n, n, k=k, dtype=dt), shape), copy=True
            )
        )
        if batch
        else lambda: xps.eye(n, n, k=k, dtype=dt),
    }


_OV_TYPES = {"bool": "boolean", "uint8": "u8", "float16": "f16"}


def _openvino_peers(c: Case) -> dict[str, Peer]:
    try:
        import openvino as ov
        from openvino import opset9
    except ImportError:
        return {}
    if c.out:
        return {}
    out_type = _OV_TYPES.get(c.dtype, "f" + c.dtype.removeprefix("float"))
    args = [opset9.constant(np.array([v], np.int64)) for v in (c.n, c.n, c.k)]
    batch = opset9.constant(np.array(c.batch, np.int64)) if c.batch else None
    node = opset9.eye(*args, output_type=out_type, batch_shape=batch)
    model = ov.Model([node], [], "eye")
    request = ov.Core().compile_model(model, "CPU").create_infer_request()

    def run() -> Any:
        request.infer()
        return request.get_output_tensor(0).data.copy()

    return {"openvino Eye-9 (copied out)": run}


_ORT_TYPES = {"float32": 1, "uint8": 2, "bool": 9, "float16": 10, "float64": 11}


def _onnxruntime_peers(c: Case) -> dict[str, Peer]:
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return {}
    if c.out or c.dtype not in _ORT_TYPES:
        return {}
    nodes = [
        helper.make_node("EyeLike", ["x"], ["e"], k=c.k, dtype=_ORT_TYPES[c.dtype])
    ]
    outputs = "e"
    inits = []
    if c.batch:
        nodes.append(helper.make_node("Expand", ["e", "s"], ["y"]))
        inits.append(helper.make_tensor("s", TensorProto.INT64, [3], list(c.shape)))
        outputs = "y"
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [c.n, c.n])],
        [helper.make_tensor_value_info(outputs, _ORT_TYPES[c.dtype], None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    options = ort.SessionOptions()
    # Its idle threads must not spin into the next peer's timing.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    x = np.zeros((c.n, c.n), np.float32)
    return {"onnxruntime EyeLike(+Expand)": lambda: session.run(None, {"x": x})[0]}


def _to_numpy(result: Any) -> np.ndarray[Any, Any] | None:
    if result is None:
        return None
    return backend_of_array(result, "result").to_numpy(result)


def _sample(fn: Peer, inner: int) -> float:
    """Seconds per call of one timed sample (``inner`` calls in a loop)."""
    t0 = time.perf_counter()
    for _ in range(inner):
        r = fn()
    seconds = (time.perf_counter() - t0) / inner
    del r
    return seconds


def _time_side_by_side(
    peers: Sequence[Peer], tiny: bool, budget: float
) -> list[list[float]]:
    """Seconds per call of each peer, one sample a round.

    Every round runs each peer in turn (in a new random order), so a burst
    of noise on this shared machine (another process, the host reclaiming
    memory, another tenant's memory traffic) lands on all peers alike
    instead of on whichever was being timed, and the samples of one round
    can be compared pairwise. Within its turn a peer first runs once
    untimed: that call absorbs what the previous peer left behind (the
    allocator's recycled or trimmed memory, caches), so the timed call sees
    the steady state a caller in a loop sees.
    """
    inner = 200 if tiny else 1
    rng = random.Random(0)
    order = list(range(len(peers)))
    samples: list[list[float]] = [[] for _ in peers]
    start = time.perf_counter()
    rounds = 0
    while rounds < 7 or (
        time.perf_counter() - start < budget * len(peers) and rounds < 50
    ):
        rng.shuffle(order)
        for j in order:
            _sample(peers[j], inner)
            samples[j].append(_sample(peers[j], inner))
        rounds += 1
    return samples


def _paired(mine: list[float], theirs: list[float]) -> float:
    """Median over rounds of the ratio of two peers' samples of one round."""
    return statistics.median(a / b for a, b in zip(mine, theirs, strict=True))


def _extra_memory(fn: Peer, nbytes: int) -> int:
    tracemalloc.start()
    try:
        r = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del r
    return max(0, peak - nbytes)


def run(
    cases: Sequence[Case], budget: float, progress: bool, others: bool = True
) -> list[dict[str, Any]]:
    """Time every peer on every case; returns one row per (case, peer).

    ``others=False`` times eyelike against NumPy and the limits only.
    """
    plan: list[tuple[Case, dict[str, Peer]]] = []
    skipped: list[str] = []
    for c in cases:
        buf = np.ones(c.shape, c.dtype) if c.out else None
        peers = _numpy_peers(c, buf)
        extras = (
            _torch_peers,
            _jax_peers,
            _openvino_peers,
            _onnxruntime_peers,
            _on_library_peers,
        )
        for extra in extras if others else ():
            try:
                peers.update(extra(c))
            except Exception as exc:  # noqa: PERF203 - a peer lacking the case is skipped
                skipped.append(f"{extra.__name__[1:-6]} on {c.name}: {exc}"[:160])
        plan.append((c, peers))
    bar: Any = None
    if progress:
        try:
            from tqdm import tqdm

            total = sum(len(p) for _, p in plan)
            bar = tqdm(total=total, desc="eyelike bench", file=sys.stderr)
        except ImportError:
            bar = None
    rows: list[dict[str, Any]] = []
    for c, peers in plan:
        rows += _run_case(c, peers, budget)
        if bar is not None:
            bar.update(len(peers))
    if bar is not None:
        bar.close()
    for note in skipped:
        print(f"skipped: {note}", file=sys.stderr)
    return rows


def _run_case(c: Case, peers: dict[str, Peer], budget: float) -> list[dict[str, Any]]:
    """Check every peer's output, then time them all side by side."""
    expected = np.broadcast_to(np.eye(c.n, c.n, c.k, c.dtype), c.shape)
    timed: list[Peer] = []
    for name, fn in peers.items():
        if not name.startswith("limit"):
            got = _to_numpy(fn())
            if got is None or not np.array_equal(got, expected):
                msg = f"{name} gave a wrong result on {c.name}"
                raise AssertionError(msg)
        if c.touch:

            def touched(fn: Peer = fn) -> Any:
                r = fn()
                a = _to_numpy(r)
                if a is not None and a.flags.writeable:
                    _touch(a)
                return r

            timed.append(touched)
        else:
            timed.append(fn)
    samples = dict(
        zip(peers, _time_side_by_side(timed, c.nbytes < 1 << 16, budget), strict=True)
    )
    limit = samples.get("limit_touched", samples.get("limit_alloc"))
    rows = []
    for name, fn in peers.items():
        seconds = statistics.median(samples[name])
        row = {
            "case": c.name,
            "peer": name,
            "median_s": seconds,
            "GB_per_s": c.nbytes / seconds / 1e9,
            # Ratios pair the samples of each round: drift between rounds
            # (the machine's load) cancels out.
            "x_limit": None if limit is None else _paired(samples[name], limit),
            "x_eyelike": _paired(samples[name], samples["eyelike"]),
            # eyelike on another library against that library's own idiom.
            # (`LIB: eyelike` and `LIB: eyelike.eye_like` both pair with
            # `LIB: idiom`.)
            "x_idiom": _paired(samples[name], samples[partner])
            if ": eyelike" in name
            and (partner := name.split(": ")[0] + ": idiom") in samples
            else None,
            "rounds": len(samples[name]),
            **{f"case_{k}": v for k, v in asdict(c).items()},
        }
        if name == "eyelike" and c.nbytes >= 1 << 20:
            row["extra_bytes"] = _extra_memory(fn, 0 if c.out else c.nbytes)
        rows.append(row)
    return rows


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"{'case':<34} {'peer':<30} {'median':>10} {'GB/s':>7} "
        f"{'x limit':>8} {'x eyelike':>9} {'x idiom':>8}"
    ]
    for r in rows:
        t = r["median_s"]
        shown = f"{t * 1e6:.2f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms"
        lim = "" if r["x_limit"] is None else f"{r['x_limit']:.2f}"
        idiom = "" if r.get("x_idiom") is None else f"{r['x_idiom']:.2f}"
        lines.append(
            f"{r['case']:<34} {r['peer']:<30} {shown:>10} {r['GB_per_s']:>7.2f} "
            f"{lim:>8} {r['x_eyelike']:>9.2f} {idiom:>8}"
        )
    return "\n".join(lines)


# Peer name prefix -> (colour map, lightest and darkest shade): one hue per
# library, so the bars of a library's idioms read as one family whatever
# the case; the limits light grey, apart from eyelike's black and grey.
_FAMILIES = (
    ("limit", "Greys", 0.2, 0.4),
    ("np.", "Blues", 0.4, 0.85),
    ("fill+", "Blues", 0.6, 0.6),
    ("torch", "Oranges", 0.45, 0.75),
    ("jax", "Reds", 0.5, 0.7),
    ("openvino", "Purples", 0.5, 0.7),
    ("onnxruntime", "Greens", 0.5, 0.7),
)


def _colors(peers: Sequence[str]) -> dict[str, Any]:
    """A colour for every peer: eyelike black, each library its own hue."""
    from matplotlib import colormaps

    colors: dict[str, Any] = {"eyelike": "black", "eyelike.eye_like": "0.35"}
    for prefix, cmap, light, dark in _FAMILIES:
        members = [p for p in peers if p.startswith(prefix) and p not in colors]
        for i, peer in enumerate(members):
            shade = light + (dark - light) * i / max(1, len(members) - 1)
            colors[peer] = colormaps[cmap](shade)
    # A peer of a library not listed above (one added later) still gets one.
    others = [p for p in peers if p not in colors]
    for i, peer in enumerate(others):
        colors[peer] = colormaps["tab10"](i % 10)
    return colors


def _rank(peer: str) -> int:
    """Where a peer's bar goes in its group (and the legend): eyelike first,
    then each library's idioms together, the limits last."""
    if peer.startswith("eyelike"):
        return 0
    if peer.startswith("limit"):
        return len(_FAMILIES) + 2
    for i, (prefix, *_) in enumerate(_FAMILIES, 1):
        if peer.startswith(prefix):
            return i
    return len(_FAMILIES) + 1


def _plot(rows: list[dict[str, Any]], path: str) -> Any:
    """A bar chart of every case's ratios to its limit, written to ``path``.

    Every case that has a limit is shown, the small ones too (``--quick``
    has no others): one group of bars per case, top to bottom in the order
    of the run, the same peer order in every group. Returns the figure.
    """
    # The Figure API, not pyplot: no global backend or state to set.
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    shown = [r for r in rows if r["x_limit"] is not None]
    cases = list(dict.fromkeys(r["case"] for r in shown))
    peers = list(dict.fromkeys(r["peer"] for r in shown))
    peers.sort(key=_rank)
    colors = _colors(peers)
    height = max(3.0, 0.12 * len(shown) + 0.25 * len(cases) + 1.5)
    fig = Figure(figsize=(11, height), layout="constrained")
    ax = fig.subplots()
    for i, case in enumerate(cases):
        present = sorted(
            (r for r in shown if r["case"] == case),
            key=lambda r: peers.index(r["peer"]),
        )
        bar = 0.8 / len(present)
        for j, r in enumerate(present):
            peer = r["peer"]
            y = i - 0.4 + (j + 0.5) * bar
            ax.barh(
                y,
                r["x_limit"],
                height=bar * 0.9,
                color=colors[peer],
            )
            if peer == "eyelike":
                ax.annotate(
                    f"{r['x_limit']:.2f}",
                    (r["x_limit"], y),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=7,
                )
    ax.set_yticks(range(len(cases)), cases)
    ax.set_ylim(len(cases) - 0.5, -0.5)  # the first case at the top, as in the table
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    # Plain numbers (0.5, 1, 2, 5), not powers of ten: most ratios lie
    # between 0.3 and 10, where a log axis would label only 1 and 10.
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(
        "time / the case's limit (limit_alloc, or limit_touched for out=); "
        "lower is better"
    )
    ax.set_title("eyelike bench: each peer's median time over the memory limit")
    # Outside the axes, right of them: it never covers a bar.
    ax.legend(
        handles=[Patch(color=colors[p], label=p) for p in peers],
        fontsize=8,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
    )
    fig.savefig(path, dpi=110)
    return fig


def _seconds(text: str) -> float:
    """``--budget``, ``--time-limit``: a finite, non-negative number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        msg = f"expected a non-negative number of seconds; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _check_writable(parser: argparse.ArgumentParser, option: str, path: str) -> None:
    """Fail at once, not after the whole run, where ``path`` cannot be
    written. Nothing is left behind: an existing file is opened without
    truncating it, a new one is created and removed."""
    target = Path(path)
    if target.is_dir():
        parser.error(f"{option} {path}: is a directory, not a file")
    if not target.parent.is_dir():
        parser.error(f"{option} {path}: directory {target.parent} does not exist")
    try:
        if target.exists():
            target.open("r+b").close()
        else:
            target.open("xb").close()
            target.unlink()
    except OSError as exc:
        parser.error(f"{option} {path}: cannot write it ({exc.strerror or exc})")


def _check_plot(parser: argparse.ArgumentParser, path: str) -> None:
    """``--plot``: matplotlib importable and a file type it writes."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        parser.error(
            f"--plot needs matplotlib, which is not installed ({exc}); "
            f"install it, or eyelike[bench]"
        )
    _check_writable(parser, "--plot", path)
    types = Figure().canvas.get_supported_filetypes()
    suffix = Path(path).suffix.lstrip(".").lower()
    if suffix not in types:
        # savefig would add .png to a name without a known suffix: another
        # file than the one asked for.
        parser.error(
            f"--plot {path}: name a file ending in one of "
            f"{', '.join('.' + t for t in sorted(types))}"
        )


_DESCRIPTION = """\
Time eyelike against its peers (NumPy idioms, and PyTorch, JAX, OpenVINO and
ONNX Runtime where installed) and against the memory limit, in one process,
side by side, and print a table.

Every output is checked against NumPy before it is timed. The peers of a case
are timed round by round, in a new random order each round; times are medians
over the rounds, and ratios are medians of each round's ratio, so the
machine's drifting load cancels out. Ratios are to limit_alloc (a fresh
np.empty filled with zeros: the cost of handing out and writing new memory)
or, for out= cases, to limit_touched (fill(0) of an already-touched buffer,
one core)."""

_EPILOG = """\
examples:
  eyelike bench --quick --numpy-only             a few seconds
  eyelike bench --json docs/bench-cpu.json --plot docs/bench-cpu.png
  eyelike bench --backend cupy --json gpu.json   the GPU table
  eyelike bench --backend cupy --time-limit 120 --json gpu.json
                                                 the same, within 2 minutes

--plot and --json are checked before anything runs; a usage error exits with
status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="eyelike bench",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        # The description and epilog are laid out by hand (the examples).
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--json", metavar="FILE", help="also write every row of the table as JSON"
    )
    parser.add_argument(
        "--plot",
        metavar="FILE.png",
        help=(
            "also draw the ratios to the limit as a bar chart (needs "
            "matplotlib; .png, .svg, .pdf, ...; CPU table only)"
        ),
    )
    parser.add_argument(
        "--budget",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help=(
            "time to spend on each peer of a case, in seconds (default 0.5); "
            "every case runs at least 7 and at most 50 rounds, so 0 is the "
            "quickest run (CPU table only)"
        ),
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="only the cases under 4 MiB (seconds, not minutes; CPU table only)",
    )
    parser.add_argument(
        "--numpy-only",
        action="store_true",
        help=(
            "time no other library: eyelike against NumPy and the limits "
            "only (CPU table only)"
        ),
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="do not show the progress bar (tqdm, on stderr, where installed)",
    )
    parser.add_argument(
        "--backend",
        choices=["numpy", "cupy"],
        default="numpy",
        help=(
            "numpy: the CPU table (default); cupy: the GPU table, eyelike on "
            "CuPy, PyTorch and JAX against their own idioms (CUDA events)"
        ),
    )
    parser.add_argument(
        "--time-limit",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help=(
            "start no case, and end a running case's rounds, once SECONDS "
            "have passed since the command started; the cases left out are "
            "listed as not run (GPU table only; --json is rewritten after "
            "every case)"
        ),
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark command line; returns the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``eyelike bench``, as the ``eyelike`` command
        passes them.

    Returns
    -------
    int
        0 on success, 2 where no CUDA device is there for ``--backend
        cupy``. A usage error (a bad ``--budget``, a ``--plot`` without
        matplotlib, a file that cannot be written) exits with status 2
        before anything runs (``SystemExit``).
    """
    started = time.monotonic()
    parser = _parser()
    args = parser.parse_args(argv)
    if args.backend != "cupy" and args.time_limit is not None:
        parser.error("--time-limit: for the GPU table only (--backend cupy)")
    if args.backend == "cupy":
        cpu_only = [
            option
            for option, given in (
                ("--plot", args.plot is not None),
                ("--budget", args.budget is not None),
                ("--quick", args.quick),
                ("--numpy-only", args.numpy_only),
            )
            if given
        ]
        if cpu_only:
            parser.error(
                f"{', '.join(cpu_only)}: for the CPU table only, not with "
                f"--backend cupy"
            )
    if args.plot is not None:
        _check_plot(parser, args.plot)
    if args.json is not None:
        _check_writable(parser, "--json", args.json)
    # Peers keep all their threads, but idle OpenMP threads (PyTorch) must
    # not spin on the cores while the next peer is timed.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if args.backend == "cupy":
        return _main_gpu(args, started)
    cases = _cases()
    if args.quick:
        cases = [c for c in cases if c.nbytes < 1 << 22]
    budget = 0.5 if args.budget is None else args.budget
    rows = run(cases, budget, not args.no_progress, not args.numpy_only)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    print(f"eyelike bench: {cores} cores, numpy {np.__version__}")
    print(_table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"cores": cores, "rows": rows}, f, indent=1)
    if args.plot:
        _plot(rows, args.plot)
    return 0


def _main_gpu(args: argparse.Namespace, started: float) -> int:
    try:
        import cupy

        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # no CuPy, no driver: say so, do not crash
        print(f"eyelike bench: no CUDA device ({exc})", file=sys.stderr)
        return 2
    if count == 0:
        print("eyelike bench: no CUDA device", file=sys.stderr)
        return 2
    from ._bench_gpu import run_gpu, table, write_json

    def on_case(rows: list[dict[str, Any]]) -> None:
        if args.json:  # every finished case on disk, should the run be killed
            write_json(args.json, rows, complete=False)

    limit = args.time_limit
    deadline = None if limit is None else started + limit
    rows = run_gpu(deadline=deadline, on_case=on_case)
    print(table(rows))
    if args.json:
        write_json(args.json, rows, complete=True)
    return 0
