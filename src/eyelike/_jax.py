"""The JAX backend: the library's rules; arrays are made by the generic
Array API path (no writes in place, so it also traces under ``jax.jit``)."""

from __future__ import annotations

import itertools
import math
from types import ModuleType
from typing import Any

from array_api_compat import is_jax_namespace

from . import _size
from ._backend import Backend

__all__ = ["JaxBackend"]


class JaxBackend(Backend):
    """JAX: immutable arrays on CPU, GPU or TPU devices."""

    name = "jax"
    module = "jax.numpy"
    mutable = False
    dtype_hint = " (64-bit types need jax.config.update('jax_enable_x64', True))"

    @staticmethod
    def recognises(xp: ModuleType) -> bool:
        return bool(is_jax_namespace(xp))

    def resolve_device(self, device: Any) -> Any:
        import jax

        if isinstance(device, str):
            try:  # a platform name: its first device
                return jax.devices(device)[0]
            except RuntimeError:
                msg = f"device {device!r} is not a JAX platform here"
                raise ValueError(msg) from None
        if not isinstance(device, jax.Device):
            msg = f"device must be a jax.Device or platform name; got {device!r}"
            raise ValueError(msg)
        return device

    def on_host(self, device: Any) -> bool:
        import jax

        platform = jax.default_backend() if device is None else device.platform
        return bool(platform == "cpu")

    def dtype_cache_key(self, device: Any) -> Any:
        import jax

        # 64-bit types come and go with this flag.
        return device, bool(jax.config.read("jax_enable_x64"))  # type: ignore[no-untyped-call]

    def dtype_table(self, device: Any) -> dict[str, Any]:
        table = super().dtype_table(device)
        for name in ("float16", "bfloat16"):
            table.setdefault(name, getattr(self.library, name))
        return table

    def check_empty_shape(
        self, shape: tuple[int, ...], itemsize: int, on_host: bool
    ) -> None:
        # JAX arrays have no strides: only XLA's own limits apply.
        lead = math.prod(itertools.takewhile(bool, shape))
        if lead > 2**60:
            # XLA aborts the process (no exception) past this.
            msg = (
                f"output shape {shape} has no elements but JAX cannot represent "
                f"it: its leading dimensions multiply past 2**60"
            )
            raise ValueError(msg)
        # XLA spends host memory on an empty array in proportion to the
        # dimensions before its first zero (about 8 bytes each, more with
        # several dimensions).
        cost = lead * 16
        memory = _size.physical_memory()
        if on_host and cost > memory:
            msg = (
                f"output shape {shape} has no elements, but JAX needs about "
                f"{cost} bytes to make it, more than this machine's "
                f"{memory} bytes of memory"
            )
            raise MemoryError(msg)
