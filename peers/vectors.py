"""The vectors' JSON format, written by ``python -m peers`` and read by ``tests/test_peers.py``.

One file per library, ``tests/peers/<key>.json``::

    {"pin": {"library", "version", "wheel", "sha256"},
     "operators": {"<operator>": {"source": {"module", "qualname", "lines", "kind", ...},
                                   "cases": [{"name", "kwargs", "inputs", "outputs"}, ...]}}}

``kwargs`` are the library's arguments that set the convention compared (modes, clip ranges,
coefficients); ``inputs`` and ``outputs`` hold arrays as ``{"dtype", "values"}`` (nested lists
of numbers; ``"nan"``, ``"inf"``, ``"-inf"`` as strings), written with Python's ``repr`` of
floats, which reads back to the same bits. A library that raises records ``{"raises": "Type:
message"}`` in place of its outputs. Keys are sorted and nothing depends on time or path, so a
rerun on the same machine writes the same bytes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

try:  # torch only where the vectors are generated; the tests read them with NumPy alone
    import torch
except ImportError:  # pragma: no cover
    torch = None


def _number(x: float) -> float | str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def encode(x: Any) -> Any:
    """JSON-ready form of tensors, arrays, numbers, dicts, lists and tuples."""
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    if isinstance(x, np.ndarray | np.generic):
        a = np.asarray(x)
        if a.dtype.kind == "f":
            values = np.vectorize(lambda v: _number(float(v)), otypes=[object])(a).tolist()
        elif a.dtype.kind == "b":
            values = a.tolist()
        else:
            values = a.astype(np.int64).tolist()
        return {"dtype": str(a.dtype), "values": values}
    if isinstance(x, dict):
        return {str(k): encode(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [encode(v) for v in x]
    if isinstance(x, float):
        return _number(x)
    return x


def decode(x: Any) -> Any:
    """NumPy arrays back from :func:`encode`'s ``{"dtype", "values"}``; everything else as is."""
    if isinstance(x, dict):
        if set(x) == {"dtype", "values"}:
            values = x["values"]
            if x["dtype"].startswith("float"):
                values = _floats(values)
            return np.array(values, dtype=x["dtype"])
        return {k: decode(v) for k, v in x.items()}
    if isinstance(x, list):
        return [decode(v) for v in x]
    return x


def _floats(values: Any) -> Any:
    if isinstance(values, list):
        return [_floats(v) for v in values]
    return float(values)  # float("nan"), float("inf") read the strings back


def _dump(x: Any, indent: int) -> str:
    """JSON with one key per line, and each innermost list of numbers on one line."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(x, dict):
        if not x:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {_dump(x[k], indent + 1)}" for k in sorted(x)]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(x, list):
        if all(not isinstance(v, dict | list) for v in x):
            return "[" + ", ".join(json.dumps(v) for v in x) + "]"
        items = [inner + _dump(v, indent + 1) for v in x]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(x, allow_nan=False)


def write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_dump(encode(data), 0) + "\n", encoding="utf-8")


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))
