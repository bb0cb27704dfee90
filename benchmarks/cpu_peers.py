"""The CPU table's peers: NumPy's idioms, PyTorch, JAX, OpenVINO and ONNX
Runtime, and eyelike on torch, JAX and array-api-strict beside each
library's own idiom. Each returns ``{name: a call making the case's output}``
(empty where its library is not installed)."""

from __future__ import annotations

import contextlib
import ctypes
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from eyelike import eye, eye_like

from .cases import CpuCase

Peer = Callable[[], Any]


def _square(a: Any, k: int) -> Any:
    """The square block of ``a`` whose main diagonal is ``a``'s diagonal k."""
    r0, c0 = max(-k, 0), max(k, 0)
    n = min(a.shape[-2] - r0, a.shape[-1] - c0)
    return a[..., r0 : r0 + n, c0 : c0 + n]


def _numpy_peers(c: CpuCase, buf: Any) -> dict[str, Peer]:
    shape, dt, k, n = c.shape, c.np_dtype, c.offsets(), c.n
    peers: dict[str, Peer] = {}
    if c.per_matrix:
        # NumPy's idiom for one offset per matrix, timed whole: the mask
        # col - row == k.
        def mask() -> Any:
            r = np.arange(n)
            return ((r[None, :] - r[:, None]) == k[..., None, None]).astype(dt)

        peers["eyelike"] = lambda: eye(n, k=k, batch_shape=c.batch, dtype=dt)
        if c.nbytes < 1 << 16:
            x = np.zeros(shape, dt)
            peers["eyelike.eye_like"] = lambda: eye_like(x, k=k)
        peers["np mask (c-r)==k"] = mask
        peers["limit_alloc"] = lambda: _limit_alloc(shape, dt)
        return peers
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

    peers["limit_alloc"] = lambda: _limit_alloc(shape, dt)
    return peers


def _limit_alloc(shape: tuple[int, ...], dt: np.dtype[Any]) -> Any:
    """A fresh array, every byte written: the least an output costs."""
    a = np.empty(shape, dt)
    a.fill(0)
    return a


def _torch_peers(c: CpuCase) -> dict[str, Peer]:
    try:
        import torch
    except ImportError:
        return {}
    if c.out or c.per_matrix:
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


def _jax_peers(c: CpuCase) -> dict[str, Peer]:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {}
    if c.out or c.per_matrix or c.dtype == "float64":
        return {}
    shape, n, k, dt = c.shape, c.n, c.k, c.dtype
    fn = jax.jit(lambda: jnp.broadcast_to(jnp.eye(n, n, k, dtype=dt), shape))
    return {"jax.jit(broadcast eye)": lambda: fn().block_until_ready()}


def _on_library_peers(c: CpuCase) -> dict[str, Peer]:
    """eyelike called on torch, JAX and array-api-strict, each beside that
    library's own best idiom for the same output: the pairs ``LIB: eyelike``
    and ``LIB: idiom`` (their ratio is the row's ``x_idiom``), eager, and
    compiled (``torch.compile``) or jitted (``jax.jit``) too."""
    if c.out or c.per_matrix:
        return {}
    peers: dict[str, Peer] = {}
    for add in (_torch_pair, _jax_pair, _strict_pair):
        with contextlib.suppress(ImportError):
            peers.update(add(c))
    return peers


def _torch_pair(c: CpuCase) -> dict[str, Peer]:
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


def _jax_pair(c: CpuCase) -> dict[str, Peer]:
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


def _strict_pair(c: CpuCase) -> dict[str, Peer]:
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


def _openvino_peers(c: CpuCase) -> dict[str, Peer]:
    try:
        import openvino as ov
        from openvino import opset9
    except ImportError:
        return {}
    if c.out or c.per_matrix or c.dtype == "bfloat16":
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


def _onnxruntime_peers(c: CpuCase) -> dict[str, Peer]:
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return {}
    if c.out or c.per_matrix or c.dtype not in _ORT_TYPES:
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
