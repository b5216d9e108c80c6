"""``repr``/``str`` of tensors, ported from torch 2.13's ``torch/_tensor_str.py``.

The port keeps torch's structure and names (``_Formatter``, ``_vector_str``, ``_tensor_str``,
``_add_suffixes``, ``get_summarized_data``) for CPU strided tensors of the layer's dtypes, so
output matches torch character for character: precision 4, the fixed/scientific choice from the
non-zero finite values, one common width, ``int_mode`` (``1.``), line wrapping at ``linewidth``
after the ``tensor(`` indent, summarisation past ``threshold`` elements, and a ``dtype=`` suffix
for dtypes other than float32, int64 and bool. It works on NumPy data: a float32 value is printed
through the Python float it converts to, as torch's ``.item()``/``.tolist()`` do.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from . import dtypes

__all__ = ["get_printoptions", "set_printoptions", "tensor_repr"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """torch.set_printoptions."""
    if profile is not None:
        defaults = {"default": (4, 1000, 3), "short": (2, 1000, 2), "full": (4, math.inf, 3)}
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems = defaults[profile]
        PRINT_OPTS.linewidth = 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    return dataclasses.asdict(PRINT_OPTS)


class _Formatter:
    def __init__(self, data: np.ndarray) -> None:
        self.floating_dtype = data.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        values = data.reshape(-1)

        if not self.floating_dtype:
            for value in values.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        nonzero_finite_vals = values[np.isfinite(values) & (values != 0)]
        if nonzero_finite_vals.size == 0:
            return  # no valid number, do nothing

        # torch converts |values| to double before taking min, max and their ratio
        nonzero_finite_abs = np.abs(nonzero_finite_vals).astype(np.float64)
        nonzero_finite_min = float(nonzero_finite_abs.min())
        nonzero_finite_max = float(nonzero_finite_abs.max())

        if np.any(nonzero_finite_vals != np.ceil(nonzero_finite_vals)):
            self.int_mode = False

        self.sci_mode = (
            nonzero_finite_max / nonzero_finite_min > 1000.0
            or nonzero_finite_max > 1.0e8
            or nonzero_finite_min < 1.0e-4
            if PRINT_OPTS.sci_mode is None
            else PRINT_OPTS.sci_mode
        )

        p = PRINT_OPTS.precision
        for value in nonzero_finite_vals.tolist():
            if self.sci_mode:
                width = len(f"{value:.{p}e}")
            elif self.int_mode:
                # a decimal point follows (e.g. "1."), so add 1 to the width
                width = len(f"{value:.0f}") + 1
            else:
                width = len(f"{value:.{p}f}")
            self.max_width = max(self.max_width, width)

    def width(self) -> int:
        return self.max_width

    def format(self, value: Any) -> str:
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _vector_str(data: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    # length includes spaces and comma between elements
    element_length = formatter.width() + 2
    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems

    if summarize and not edge:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * edge:
        items = (
            [formatter.format(v) for v in data[:edge].tolist()]
            + [" ..."]
            + [formatter.format(v) for v in data[-edge:].tolist()]
        )
    else:
        items = [formatter.format(v) for v in data.tolist()]

    lines = [
        ", ".join(items[i : i + elements_per_line])
        for i in range(0, len(items), elements_per_line)
    ]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(
    data: np.ndarray, indent: int, summarize: bool, formatter: _Formatter
) -> str:
    dim = data.ndim
    if dim == 0:
        return formatter.format(data.item())
    if dim == 1:
        return _vector_str(data, indent, summarize, formatter)

    edge = PRINT_OPTS.edgeitems
    if summarize and data.shape[0] > 2 * edge:
        slices = (
            [_tensor_str_with_formatter(data[i], indent + 1, summarize, formatter)
             for i in range(edge)]
            + ["..."]
            + [_tensor_str_with_formatter(data[i], indent + 1, summarize, formatter)
               for i in range(len(data) - edge, len(data))]
        )
    else:
        slices = [
            _tensor_str_with_formatter(data[i], indent + 1, summarize, formatter)
            for i in range(data.shape[0])
        ]
    tensor_str = ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices)
    return "[" + tensor_str + "]"


def get_summarized_data(data: np.ndarray) -> np.ndarray:
    dim = data.ndim
    edge = PRINT_OPTS.edgeitems
    if dim == 0:
        return data
    if dim == 1:
        if data.shape[0] > 2 * edge:
            return np.concatenate((data[:edge], data[-edge:]))
        return data
    if not edge:
        return np.empty([0] * dim, data.dtype)
    if data.shape[0] > 2 * edge:
        rows = [data[i] for i in range(edge)] + [
            data[i] for i in range(len(data) - edge, len(data))
        ]
        return np.stack([get_summarized_data(x) for x in rows])
    return np.stack([get_summarized_data(x) for x in data])


def _tensor_str(data: np.ndarray, indent: int) -> str:
    if data.size == 0:
        return "[]"
    summarize = data.size > PRINT_OPTS.threshold
    formatter = _Formatter(get_summarized_data(data) if summarize else data)
    return _tensor_str_with_formatter(data, indent, summarize, formatter)


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int) -> str:
    tensor_strs = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = len(suffix)
        if last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            tensor_strs.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
        else:
            tensor_strs.append(", " + suffix)
            last_line_len += suffix_len + 2
    tensor_strs.append(")")
    return "".join(tensor_strs)


def tensor_repr(tensor: Any) -> str:
    """torch's ``_str_intern`` for a CPU tensor: ``grad_fn=<…>`` or ``requires_grad=True`` last."""
    data: np.ndarray = tensor._data
    dt = tensor.dtype
    prefix = "tensor("
    indent = len(prefix)
    suffixes: list[str] = []
    has_default_dtype = dt in (dtypes.DEFAULT_FLOAT, dtypes.int64, dtypes.bool_)
    if data.size == 0:
        # Explicitly print the shape if it is not (0,), to match NumPy behavior
        if data.ndim != 1:
            suffixes.append("size=" + str(tuple(data.shape)))
        # An empty tensor shows its dtype unless it is the default float
        if dt is not dtypes.DEFAULT_FLOAT:
            suffixes.append("dtype=" + str(dt))
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(data.shape)))
        if not has_default_dtype:
            suffixes.append("dtype=" + str(dt))
        tensor_str = _tensor_str(data, indent)
    grad_fn = tensor.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name().rsplit('::', 1)[-1]}>")
    elif tensor.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + tensor_str, suffixes, indent)
