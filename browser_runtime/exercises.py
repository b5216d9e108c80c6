"""The exercise manifest: what each lesson file declares about its exercise, and its random inputs.

A lesson file (``docs/<chapter>/<name>.py``) ends with a ``check`` section, the one place an
exercise is declared::

    # --8<-- [start:check]
    TITLE = {"en": "Importance Ratio", "zh": "重要性采样比"}


    def inputs(draw):
        B, T = draw.size()
        return {"new_logprobs": draw.normal((B, T), 0.5), ..., "mask": draw.mask(B, T)}
    # --8<-- [end:check]

``TITLE`` is the heading of its drill, one per language. ``inputs(draw)`` returns the function's
arguments for one random case, in its parameter order (the learner's function is called
positionally, the reference with keywords). :class:`Draw` is the one generator of random inputs:
sizes, masks of every layout, normals, choices, and what several exercises draw alike (groups,
scores, advantages). After ``TITLE`` the section may set, each on a line of its own:
``REFERENCE = "compute_gae_episode"``, the ``rl_ops_numpy`` function Check compares with when it
is not the one of the exercise's own name; ``TIMEOUT``, the seconds one run may take in the
browser; ``RTOL, ATOL``, how close Check wants the values (:class:`Exercise` holds the defaults).

The id of an exercise is ``<chapter>/<name>`` (``ppo/compute_gae``), unique across the site: the
page, the download, the drill, saved work and Check all use it. The site build parses the section
(``site_build.lessons``) and ships every entry in the wheel as ``exercises.json``; Check looks
exercises up there. Tests build the same entries from ``docs/``.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

Inputs = dict[str, Any]

# mask layouts, by case number: full rows, right-padded, left-padded, a prompt in front and
# padding behind, holes, whole rows of padding, nothing at all
LAYOUTS = ("full", "right", "left", "both", "holes", "zero_rows", "all_zero")

# the constants a check section may set: name -> (required, type)
_CONSTANTS = {
    "TITLE": (True, dict),
    "REFERENCE": (False, str),
    "TIMEOUT": (False, (int, float)),
    "RTOL": (False, (int, float)),
    "ATOL": (False, (int, float)),
}


def mask(rng: np.random.Generator, B: int, T: int, layout: str) -> np.ndarray:
    """A [B, T] 0/1 mask (float64) of the given layout."""
    m = np.zeros((B, T))
    for b in range(B):
        n = int(rng.integers(1, T + 1))  # response length of this row
        if layout == "full":
            m[b] = 1
        elif layout == "right":
            m[b, :n] = 1
        elif layout == "left":
            m[b, T - n :] = 1
        elif layout == "both":
            s = int(rng.integers(0, T - n + 1))
            m[b, s : s + n] = 1
        elif layout == "holes":
            m[b] = rng.random(T) < 0.6
        elif layout == "zero_rows":
            m[b, :n] = 1 if rng.random() < 0.5 else 0
        elif layout != "all_zero":
            raise ValueError(f"unknown mask layout {layout!r}; known: {', '.join(LAYOUTS)}")
    return m


class Draw:
    """Random inputs for case ``case`` of a check: the same for the same ``(seed, case)``.

    Case 0 is the smallest (``size()`` gives ``(1, 1)``); masks cycle through :data:`LAYOUTS`
    by case number. ``size`` fixes what ``size()`` returns (tests use large shapes); ``dtype``
    is the floating type of every array drawn.
    """

    def __init__(self, seed: int, case: int, *, dtype: type = np.float32,
                 size: tuple[int, int] | None = None) -> None:
        self.rng = np.random.default_rng([seed, case])
        self.case = case
        self.dtype = dtype
        self._size = size

    def size(self, max_b: int = 4, max_t: int = 8) -> tuple[int, int]:
        """``(B, T)``, batch and response length: (1, 1) for case 0, else up to ``max_b`` ×
        ``max_t``."""
        if self._size is not None:
            return self._size
        if self.case == 0:
            return 1, 1
        return int(self.rng.integers(1, max_b + 1)), int(self.rng.integers(1, max_t + 1))

    def length(self, low: int = 1, high: int = 11) -> int:
        """A length in ``[low, high]`` (``low`` for case 0)."""
        if self._size is not None:
            return max(low, self._size[1])
        return low if self.case == 0 else int(self.rng.integers(low, high + 1))

    @property
    def layout(self) -> str:
        return LAYOUTS[self.case % len(LAYOUTS)]

    def mask(self, B: int, T: int, layout: str | None = None) -> np.ndarray:
        """A [B, T] 0/1 mask of this case's layout (or of ``layout``)."""
        return mask(self.rng, B, T, layout or self.layout).astype(self.dtype)

    def normal(self, shape: int | tuple[int, ...], scale: float = 1.0,
               shift: float = 0.0) -> np.ndarray:
        """Normal values, ``shift + scale · N(0, 1)``, of this draw's dtype."""
        return (self.rng.normal(0.0, scale, shape) + shift).astype(self.dtype)

    def lognormal(self, shape: int | tuple[int, ...], sigma: float = 1.0) -> np.ndarray:
        """``exp(σ · N(0, 1))``: positive values around 1, such as probability ratios."""
        return np.exp(self.normal(shape, sigma))

    def choice(self, options: list | tuple, shape: int | tuple[int, ...] | None = None) -> Any:
        """One of ``options``, as a plain Python value; with ``shape``, an array of numbers
        drawn from ``options``, of this draw's dtype."""
        if shape is not None:
            return np.asarray(options, self.dtype)[self.rng.integers(0, len(options), shape)]
        value = options[int(self.rng.integers(0, len(options)))]
        return value.item() if isinstance(value, np.generic) else value

    def coin(self, p: float = 0.5) -> bool:
        """True with probability ``p``."""
        return bool(self.rng.random() < p)

    def groups(self, max_groups: int = 4) -> tuple[int, int]:
        """``(G, N)``: G responses to each prompt (2, 3, 4 or 8), N = groups × G of them in all,
        from 1 to ``max_groups`` groups."""
        G = self.choice([2, 3, 4, 8])
        return G, G * self.length(1, max_groups)

    def scores(self, N: int) -> np.ndarray:
        """``[N]`` scores of responses: a verifier's 0/1 (so many groups all equal) or a reward
        model's real numbers."""
        return self.choice([0.0, 1.0], N) if self.coin() else self.normal(N)

    def advantages(self, B: int, T: int) -> np.ndarray:
        """Advantages of a batch: one per response ``[B]`` or one per token ``[B, T]``."""
        return self.normal(B) if self.coin() else self.normal((B, T))


@dataclass(frozen=True)
class Exercise:
    """One exercise: its id, the function a learner writes, and its parsed check section."""

    id: str  # "<chapter>/<name>", e.g. "ppo/compute_gae"
    function: str  # the name of the function the learner writes
    source: str = field(repr=False)  # the check section's code
    title: dict[str, str] = field(default_factory=dict)
    reference: str = ""  # the rl_ops_numpy function Check compares with
    timeout: float = 10.0
    rtol: float = 1e-4
    atol: float = 1e-5

    @classmethod
    def parse(cls, id: str, function: str, source: str,
              languages: tuple[str, ...] | None = None) -> Exercise:
        """Read the constants of a check section (as literals: nothing runs) and make sure it
        defines ``inputs(draw)`` and, given the site's ``languages`` (the build gives them:
        site_build.languages), a title in each. Errors name the exercise and what is wrong."""
        where = f"{id}: the check section"
        try:
            tree = ast.parse(source)
        except SyntaxError as err:
            raise ValueError(f"{where} is not valid Python: {err}") from err
        values: dict[str, Any] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign):
                targets = node.targets[0]
                names = targets.elts if isinstance(targets, ast.Tuple) else [targets]
                value = ast.literal_eval(node.value)
                parts = value if isinstance(targets, ast.Tuple) else [value]
                for name, v in zip(names, parts, strict=True):
                    assert isinstance(name, ast.Name)
                    values[name.id] = v
        for name, (required, kind) in _CONSTANTS.items():
            if required and name not in values:
                raise ValueError(f"{where} does not set {name}")
            if name in values and not isinstance(values[name], kind):
                raise ValueError(f"{where}: {name} = {values[name]!r} has the wrong type")
        unknown = sorted(set(values) - set(_CONSTANTS))
        if unknown:
            raise ValueError(f"{where} sets {unknown}; it may set {sorted(_CONSTANTS)}")
        if languages is not None and sorted(values["TITLE"]) != sorted(languages):
            raise ValueError(f"{where}: TITLE needs one title per language {languages}")
        if not any(isinstance(n, ast.FunctionDef) and n.name == "inputs" for n in tree.body):
            raise ValueError(f"{where} does not define inputs(draw)")
        return cls(
            id=id, function=function, source=source, title=dict(values["TITLE"]),
            reference=values.get("REFERENCE", function),
            timeout=float(values.get("TIMEOUT", cls.timeout)),
            rtol=float(values.get("RTOL", cls.rtol)), atol=float(values.get("ATOL", cls.atol)),
        )

    def inputs(self, seed: int, case: int, **draw: Any) -> Inputs:
        """The arguments of case ``case`` (see :class:`Draw` for ``draw``'s options)."""
        namespace: dict = {"__name__": f"check_{self.id.replace('/', '_')}"}
        exec(compile(self.source, f"<check section of {self.id}>", "exec"), namespace)
        return namespace["inputs"](Draw(seed, case, **draw))

    def expected(self, inputs: Inputs) -> Any:
        """What the NumPy reference gives for ``inputs``."""
        import rl_ops_numpy

        return getattr(rl_ops_numpy, self.reference)(**inputs)

    def entry(self) -> dict[str, str]:
        """What the wheel's ``exercises.json`` keeps: everything else is parsed from it."""
        return {"id": self.id, "function": self.function, "source": self.source}


MANIFEST = "exercises.json"  # inside this package, in the wheel the site ships


def _read_manifest() -> tuple[tuple[str, str, str], ...]:
    """The wheel's manifest as ``(id, function, source)`` tuples; empty outside the wheel."""
    path = resources.files(__package__) / MANIFEST
    if not path.is_file():
        return ()
    entries = json.loads(path.read_text(encoding="utf-8"))
    return tuple((e["id"], e["function"], e["source"]) for e in entries)


# Read once, when trusted code imports this module, into a tuple of strings: a learner's run can
# rebind the name (the sandbox binds it back) but cannot change what it holds, so Check never
# reads an entry a learner wrote. Exercise objects are made anew for every lookup for the same
# reason.
_ENTRIES = _read_manifest()


def get(exercise: str | Exercise) -> Exercise:
    """An exercise of the wheel's manifest by id, or the exercise itself (tests, CPython)."""
    if isinstance(exercise, Exercise):
        return exercise
    for id, function, source in _ENTRIES:
        if id == exercise:
            return Exercise.parse(id, function, source)
    if not _ENTRIES:
        raise LookupError(
            f"{MANIFEST} is missing: the site build writes it into the wheel; under CPython, "
            "pass Exercise objects made from the lesson files (site_build.lessons)"
        )
    known = ", ".join(id for id, _, _ in _ENTRIES)
    raise KeyError(f"no exercise {exercise!r}; there are: {known}")
