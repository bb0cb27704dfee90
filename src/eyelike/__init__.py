"""Identity and shifted-diagonal matrices, one or a batch, on any array library.

``eye`` and ``eye_like`` work on NumPy, CuPy and every Array API namespace;
``eyelike.onnx`` and ``eyelike.openvino`` implement ONNX EyeLike-9 and
OpenVINO Eye-9 exactly.
"""

from . import onnx as onnx
from . import openvino as openvino
from ._core import eye
from ._core_like import eye_like
from ._validate.dtypes import DTypeError

__all__ = ["DTypeError", "__version__", "eye", "eye_like"]

__version__ = "0.1.0"
