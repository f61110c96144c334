"""`tc.onnx`: ONNX export is not part of this framework. `import tinygrad_course.onnx` works; `export`
raises NotImplementedError saying what to use instead."""
from __future__ import annotations

__all__ = ["dynamo_export", "export", "is_in_onnx_export"]

_INSTEAD = ("save the weights with tc.save(model.state_dict(), path) and rebuild the model in PyTorch "
            "(torch.nn layers have the same names), then call torch.onnx.export there")


def export(*args, **kwargs):
    """`torch.onnx.export`: not supported here; raises NotImplementedError."""
    raise NotImplementedError(f"tc.onnx.export is not supported: tinygrad_course cannot write ONNX graphs. "
                              f"Instead, {_INSTEAD}.")


def dynamo_export(*args, **kwargs):
    """`torch.onnx.dynamo_export`: not supported here; raises NotImplementedError."""
    raise NotImplementedError(f"tc.onnx.dynamo_export is not supported: tinygrad_course cannot write ONNX graphs. "
                              f"Instead, {_INSTEAD}.")


def is_in_onnx_export() -> bool:
    """False: no ONNX export is ever running."""
    return False
