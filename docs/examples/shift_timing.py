"""Times of the shift-augmentation example (docs/guide/shift-augmentation.rst).

Run ``python docs/examples/shift_timing.py [B L C M]`` (default 256 128 8 16:
B signals of L steps and C channels, shifts in [-M, M]). It checks that
every variant gives the loop's result, then prints the best of 5 repeats of
each, in milliseconds. PyTorch rows appear where PyTorch is installed.
"""

from __future__ import annotations

import sys
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import eyelike


def shift_loop(x: Any, shifts: Any) -> Any:
    """What one writes without shift matrices: one slice copy per sample."""
    y = np.zeros_like(x)
    length = x.shape[1]
    for b, s in enumerate(shifts.tolist()):
        if s >= 0:
            y[b, s:] = x[b, : length - s]
        else:
            y[b, : length + s] = x[b, -s:]
    return y


def best_ms(fn: Callable[[], Any]) -> float:
    """Best of 5 repeats of 5 calls, per call, in milliseconds."""
    return min(timeit.repeat(fn, number=5, repeat=5)) / 5 * 1e3


def main() -> None:
    batch, length, channels, most = (int(v) for v in sys.argv[1:5] or (256, 128, 8, 16))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, length, channels), dtype=np.float32)
    shifts = rng.integers(-most, most + 1, size=batch)
    want = shift_loop(x, shifts)

    def eyelike_matrices() -> Any:
        return eyelike.eye(length, batch_shape=batch, k=-shifts, dtype=x.dtype)

    def np_eye_loop() -> Any:
        return np.stack([np.eye(length, k=-s, dtype=x.dtype) for s in shifts])

    shift = eyelike_matrices()
    assert np.array_equal(np_eye_loop(), shift)
    assert np.array_equal(shift @ x, want)
    rows = [
        ("NumPy", "shift matrices: eyelike.eye, one call", best_ms(eyelike_matrices)),
        ("NumPy", "shift matrices: loop of np.eye + np.stack", best_ms(np_eye_loop)),
        ("NumPy", "apply: batched matmul S @ x", best_ms(lambda: shift @ x)),
        (
            "NumPy",
            "no matrices: loop of slice copies",
            best_ms(lambda: shift_loop(x, shifts)),
        ),
    ]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        xt, st = torch.from_numpy(x), torch.from_numpy(shifts)

        def torch_matrices() -> Any:
            return eyelike.eye(
                length, batch_shape=batch, k=-st, dtype=xt.dtype, xp=torch
            )

        def torch_diag_loop() -> Any:
            return torch.stack(
                [torch.diag(torch.ones(length - abs(s)), -s) for s in st.tolist()]
            )

        shift_t = torch_matrices()
        assert torch.equal(torch_diag_loop(), shift_t)
        assert torch.equal(shift_t @ xt, torch.from_numpy(want))
        rows += [
            (
                "PyTorch",
                "shift matrices: eyelike.eye, one call",
                best_ms(torch_matrices),
            ),
            (
                "PyTorch",
                "shift matrices: loop of torch.diag + stack",
                best_ms(torch_diag_loop),
            ),
            ("PyTorch", "apply: batched matmul S @ x", best_ms(lambda: shift_t @ xt)),
        ]
    print(f"B={batch} L={length} C={channels} shifts in [-{most}, {most}]")
    for library, what, ms in rows:
        print(f"{library:<8} {what:<44} {ms:8.2f} ms")


if __name__ == "__main__":
    main()
