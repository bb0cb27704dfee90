"""The CPU table's plot: every case's ratios to its limit as bars."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["plot", "styles"]


# Peer name prefix -> colour map: one hue per library, so a library's peers
# read as one family in every case (prefixes tried in order: the longer
# "torch.compile" and "jax.jit" before "torch" and "jax").
_FAMILIES = (
    ("limit", "Greys"),
    ("np.", "Blues"),
    ("fill+", "Blues"),
    ("torch", "Oranges"),
    ("jax", "Reds"),
    ("array_api_strict", "YlGn"),
    ("openvino", "Purples"),
    ("onnxruntime", "BuGn"),
)
# eyelike's own bars (NumPy): black and dark grey.
_OURS = {"eyelike": "black", "eyelike.eye_like": "0.35"}
# eyelike called on another library ("torch: eyelike"): that library's hue,
# hatched, so it is never mistaken for the library's own idiom beside it.
_HATCH_OURS = "////"


def _family(peer: str) -> str | None:
    for prefix, cmap in _FAMILIES:
        if peer.startswith(prefix):
            return cmap
    return None


def styles(peers: Sequence[str]) -> dict[str, tuple[Any, str]]:
    """(colour, hatch) for every peer: eyelike black; each library its own
    hue, its members spread over the whole light-to-dark range (distinct
    shades, not near-identical ones); eyelike on a library hatched. No two
    peers share a style."""
    from matplotlib import colormaps

    found: dict[str, tuple[Any, str]] = {p: (c, "") for p, c in _OURS.items()}
    families: dict[str, list[str]] = {}
    strays = []
    for peer in peers:
        if peer in found:
            continue
        cmap = _family(peer)
        if cmap is None:
            strays.append(peer)
        else:
            families.setdefault(cmap, []).append(peer)
    for cmap, members in families.items():
        # Greys stay light (limits are a reference, not a competitor).
        light, dark = (0.25, 0.5) if cmap == "Greys" else (0.35, 0.95)
        for i, peer in enumerate(members):
            shade = light + (dark - light) * i / max(1, len(members) - 1)
            hatch = _HATCH_OURS if ": eyelike" in peer else ""
            found[peer] = (colormaps[cmap](shade), hatch)
    # A peer of a library not listed above (one added later) still gets one
    # of its own: tab10's cyan, olive, pink, brown, ... (never blue or
    # orange, which are NumPy's and torch's).
    spare = [9, 8, 6, 5, 7, 4, 2]
    for i, peer in enumerate(strays):
        found[peer] = (colormaps["tab10"](spare[i % len(spare)]), "xx" * (i // 7))
    return {p: found[p] for p in peers}


def _rank(peer: str) -> int:
    """Where a peer goes in the legend: eyelike first, then each library's
    peers together, the limits last."""
    if peer.startswith("eyelike"):
        return 0
    if peer.startswith("limit"):
        return len(_FAMILIES) + 2
    for i, (prefix, _) in enumerate(_FAMILIES, 1):
        if peer.startswith(prefix):
            return i
    return len(_FAMILIES) + 1


def plot(rows: list[dict[str, Any]], path: str) -> Any:
    """A bar chart of every case's ratios to its limit, written to ``path``.

    Every case that has a limit is shown, the small ones too: one group of
    bars per case, top to bottom in the order of the run; within a group
    the bars are sorted, fastest at the top, and each is labelled with its
    ratio. Returns the figure.
    """
    # The Figure API, not pyplot: no global backend or state to set.
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    shown = [r for r in rows if r["x_limit"] is not None]
    cases = list(dict.fromkeys(r["case"] for r in shown))
    peers = sorted(dict.fromkeys(r["peer"] for r in shown), key=_rank)
    style = styles(peers)
    height = max(3.0, 0.14 * len(shown) + 0.25 * len(cases) + 1.5)
    fig = Figure(figsize=(11, height), layout="constrained")
    ax = fig.subplots()
    for i, case in enumerate(cases):
        present = sorted(
            (r for r in shown if r["case"] == case), key=lambda r: r["x_limit"]
        )
        bar = 0.8 / len(present)
        for j, r in enumerate(present):
            color, hatch = style[r["peer"]]
            y = i - 0.4 + (j + 0.5) * bar
            ax.barh(
                y,
                r["x_limit"],
                height=bar * 0.9,
                color=color,
                hatch=hatch,
                edgecolor="white" if hatch else color,
                linewidth=0,
            )
            ax.annotate(
                f"{r['x_limit']:.2f}",
                (r["x_limit"], y),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=6,
                fontweight="bold" if r["peer"] == "eyelike" else "normal",
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
        "lower is better; hatched: eyelike on that library"
    )
    ax.set_title("benchmarks: each peer's median time over the memory limit")
    # Outside the axes, right of them: it never covers a bar.
    ax.legend(
        handles=[
            Patch(
                facecolor=style[p][0],
                hatch=style[p][1],
                edgecolor="white",
                linewidth=0,
                label=p,
            )
            for p in peers
        ],
        fontsize=8,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
    )
    fig.savefig(path, dpi=110)
    return fig
