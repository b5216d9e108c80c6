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
browser; ``RTOL, ATOL``, how close Check wants the values (:class:`Exercise` holds the defaults);
``PADDING``, what each input may hold on padding (below); ``GRADIENT = ("new_logprobs",)``, the
inputs that carry a gradient in training, where the page teaches the gradient: Check then also
compares the learner's gradient with respect to them with the answer's (browser_runtime/check.py).

**Inputs that teach.** What ``inputs(draw)`` returns is only the start of a case
(:meth:`Exercise.inputs`); two things are added to it, so that the mistakes a page warns about
change the result:

- *Padding holds anything.* Real log-probs of pad tokens are −inf or NaN as often as not, and
  an operator must give the same answer whatever padding holds. In two thirds of the cases whose
  mask (an input named in :data:`MASKS`) has padding, every float input of the mask's shape gets
  non-finite or huge values on the padding: by default each position one of NaN, ±inf, ±1e30
  (``"anything"``); ``PADDING = {"new_logprobs": "logprob"}`` says an input holds what log-probs
  of padding hold (−inf, NaN, −1e30); ``"finite"`` leaves its padding as drawn (say why beside).
  A multiply by the mask (0 × inf is NaN) or a blend where the answer selects then fails.
- *Defaults are left out.* In a quarter of the cases the tail of the arguments that have a
  default in the lesson's signature is not passed (in another quarter a part of that tail), so
  the learner's defaults are the ones used and the reference's (which must be the lesson's) are
  compared with them: a typed ``lam=0.9`` for ``lam=0.95`` fails. A case that must pass an
  argument says so: ``draw.keep("k_ratio")``.

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

# inputs that hold 0/1 flags: padding is where they are 0
MASKS = frozenset({"mask", "response_mask"})

# what an input may hold on padding (PADDING in a check section): the values drawn there, each
# position one of them; "finite" leaves the padding as the section drew it
BIG = 1e30  # finite in float32 (whose largest is 3.4e38), but its square or exp is not
PADDING_VALUES = {
    "anything": (np.nan, np.inf, -np.inf, BIG, -BIG),
    # log 0, a NaN, a masked logit's log-prob, the 0 that libraries fill padding's log-probs with
    "logprob": (-np.inf, -np.inf, np.nan, -BIG, 0.0),
    "finite": (),
}
PADDED_SHARE = 2 / 3  # of the cases with padding, those whose padding holds such values
INPUT_SHARE = 3 / 4  # of the padded inputs in such a case, those that hold them (one at least)
LEFT_OUT_SHARE = 1 / 4  # of the cases, those that leave every default out (and as many, some)

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
    "PADDING": (False, dict),
    "GRADIENT": (False, tuple),
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
            m[b, :n] = 1
        elif layout != "all_zero":
            raise ValueError(f"unknown mask layout {layout!r}; known: {', '.join(LAYOUTS)}")
    if layout == "zero_rows":  # rows of padding only: some, and (B ≥ 2) not all of them
        empty = rng.random(B) < 0.5
        if B >= 2 and (empty.all() or not empty.any()):
            empty[int(rng.integers(0, B))] ^= True
        m[empty] = 0
    return m


def padding(inputs: Inputs) -> tuple[np.ndarray, list[str]]:
    """Where the padding of ``inputs`` is (bool, True on padding; a 0-d False without a mask:
    an input named in :data:`MASKS`) and the float inputs of the mask's shape, which may hold
    anything there."""
    masks = [v for k, v in inputs.items() if k in MASKS and isinstance(v, np.ndarray)]
    if not masks:
        return np.zeros((), bool), []
    pad = masks[0] == 0
    names = [k for k, v in inputs.items() if k not in MASKS and isinstance(v, np.ndarray)
             and v.dtype.kind == "f" and v.shape == pad.shape]
    return pad, names


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
        self.kept: set[str] = set()  # arguments this case passes even where it leaves defaults out

    def keep(self, *names: str) -> None:
        """Pass these arguments in this case even if they have defaults (a value the case needs:
        ``k_ratio = 1.0`` where a smaller one would make a tie)."""
        self.kept.update(names)

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
    padding: dict[str, str] = field(default_factory=dict)  # input -> a key of PADDING_VALUES
    # the lesson's parameters that have a default, in order, each with its default's source text
    defaults: dict[str, str] = field(default_factory=dict)
    # the inputs that carry a gradient in training (the policy's log-probs, the critic's values):
    # Check compares the learner's gradient with respect to them with the answer's
    gradient: tuple[str, ...] = ()
    answer: str = field(default="", repr=False)  # the lesson's answer: the gradient's reference

    @classmethod
    def parse(cls, id: str, function: str, source: str,
              languages: tuple[str, ...] | None = None,
              defaults: dict[str, str] | None = None, answer: str = "") -> Exercise:
        """Read the constants of a check section (as literals: nothing runs) and make sure it
        defines ``inputs(draw)`` and, given the site's ``languages`` (the build gives them:
        site_build.languages), a title in each. ``defaults``: the lesson function's parameters
        that have a default (name -> its source text), which a share of cases leaves out;
        ``answer``: the lesson's exercise section, answered (the gradient's reference, where the
        section sets ``GRADIENT``). Errors name the exercise and what is wrong."""
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
        if values.get("GRADIENT") and not answer and languages is not None:
            raise ValueError(f"{where} sets GRADIENT, whose reference is the lesson's answer")
        if languages is not None and sorted(values["TITLE"]) != sorted(languages):
            raise ValueError(f"{where}: TITLE needs one title per language {languages}")
        if not any(isinstance(n, ast.FunctionDef) and n.name == "inputs" for n in tree.body):
            raise ValueError(f"{where} does not define inputs(draw)")
        padding = values.get("PADDING", {})
        for name, kind in padding.items():
            if kind not in PADDING_VALUES:
                raise ValueError(f"{where}: PADDING[{name!r}] = {kind!r}; it may be one of "
                                 f"{sorted(PADDING_VALUES)}")
        return cls(
            id=id, function=function, source=source, title=dict(values["TITLE"]),
            reference=values.get("REFERENCE", function),
            timeout=float(values.get("TIMEOUT", cls.timeout)),
            rtol=float(values.get("RTOL", cls.rtol)), atol=float(values.get("ATOL", cls.atol)),
            padding=dict(padding), defaults=dict(defaults or {}),
            gradient=tuple(values.get("GRADIENT", ())), answer=answer,
        )

    def drawn(self, seed: int, case: int, **draw: Any) -> tuple[Inputs, Draw]:
        """What the section's ``inputs(draw)`` returns for case ``case``, and the draw it used."""
        namespace: dict = {"__name__": f"check_{self.id.replace('/', '_')}"}
        exec(compile(self.source, f"<check section of {self.id}>", "exec"), namespace)
        source = Draw(seed, case, **draw)
        return namespace["inputs"](source), source

    def inputs(self, seed: int, case: int, **draw: Any) -> Inputs:
        """The arguments of case ``case`` (see :class:`Draw` for ``draw``'s options): what the
        section draws, with padding that holds anything and defaults left out in a share of the
        cases (see the module's docstring: inputs that teach)."""
        values, source = self.drawn(seed, case, **draw)
        teach = np.random.default_rng([seed, case, 1])  # apart from the section's own draws
        values = self._pad(values, teach)
        return self._leave_out(values, teach, source.kept)

    def _pad(self, inputs: Inputs, rng: np.random.Generator) -> Inputs:
        """In :data:`PADDED_SHARE` of the cases with padding, each padded input's padding gets
        the values its ``PADDING`` kind may hold (``"anything"`` unless the section says)."""
        pad, names = padding(inputs)
        if not pad.any() or rng.random() >= PADDED_SHARE:
            return inputs
        out = dict(inputs)
        # each input on its own (one of them always): padding that holds junk in one input and
        # plain numbers in another is where a gradient meets 0 × inf
        held = rng.random(len(names)) < INPUT_SHARE
        if len(names):
            held[int(rng.integers(0, len(names)))] = True
        for name, holds in zip(names, held, strict=True):
            choices = PADDING_VALUES[self.padding.get(name, "anything")]
            if choices and holds:
                x = out[name].copy()
                # one value for all of the input's padding (as a library fills it), or a mix
                n = 1 if rng.random() < 0.5 else int(pad.sum())
                picks = np.resize(rng.integers(0, len(choices), n), int(pad.sum()))
                x[pad] = np.asarray(choices, dtype=x.dtype)[picks]
                out[name] = x
        return out

    def _leave_out(self, inputs: Inputs, rng: np.random.Generator, kept: set[str]) -> Inputs:
        """Leave out the tail of the arguments that have defaults (but those the case keeps):
        all of it in :data:`LEFT_OUT_SHARE` of the cases, so that each default is used in at
        least that share, and a shorter part of it in as many again."""
        names = list(inputs)
        tail = 0
        while tail < len(names) and names[-1 - tail] in self.defaults \
                and names[-1 - tail] not in kept:
            tail += 1
        draw = rng.random()
        if draw < LEFT_OUT_SHARE:
            drop = tail
        elif draw < 2 * LEFT_OUT_SHARE and tail >= 2:
            drop = int(rng.integers(1, tail))
        else:
            drop = 0
        return {k: inputs[k] for k in names[: len(names) - drop]}

    def left_out(self, inputs: Inputs) -> dict[str, str]:
        """The arguments with defaults that ``inputs`` does not pass, each with its default."""
        return {k: v for k, v in self.defaults.items() if k not in inputs}

    def expected(self, inputs: Inputs) -> Any:
        """What the NumPy reference gives for ``inputs`` (quietly: padding that holds inf
        overflows where the reference computes before it masks, as torch does without a word)."""
        import rl_ops_numpy

        with np.errstate(all="ignore"):
            return getattr(rl_ops_numpy, self.reference)(**inputs)

    def entry(self) -> dict:
        """What the wheel's ``exercises.json`` keeps: everything else is parsed from it."""
        return {"id": self.id, "function": self.function, "source": self.source,
                "defaults": self.defaults, "answer": self.answer if self.gradient else ""}


MANIFEST = "exercises.json"  # inside this package, in the wheel the site ships


def _read_manifest() -> tuple[tuple[str, str, str, tuple[tuple[str, str], ...], str], ...]:
    """The wheel's manifest as ``(id, function, source, defaults, answer)`` tuples (defaults as
    pairs); empty outside the wheel."""
    path = resources.files(__package__) / MANIFEST
    if not path.is_file():
        return ()
    entries = json.loads(path.read_text(encoding="utf-8"))
    return tuple((e["id"], e["function"], e["source"], tuple(e["defaults"].items()), e["answer"])
                 for e in entries)


# Read once, when trusted code imports this module, into a tuple of strings: a learner's run can
# rebind the name (the sandbox binds it back) but cannot change what it holds, so Check never
# reads an entry a learner wrote. Exercise objects are made anew for every lookup for the same
# reason.
_ENTRIES = _read_manifest()


def get(exercise: str | Exercise) -> Exercise:
    """An exercise of the wheel's manifest by id, or the exercise itself (tests, CPython)."""
    if isinstance(exercise, Exercise):
        return exercise
    for id, function, source, defaults, answer in _ENTRIES:
        if id == exercise:
            return Exercise.parse(id, function, source, defaults=dict(defaults), answer=answer)
    if not _ENTRIES:
        raise LookupError(
            f"{MANIFEST} is missing: the site build writes it into the wheel; under CPython, "
            "pass Exercise objects made from the lesson files (site_build.lessons)"
        )
    known = ", ".join(entry[0] for entry in _ENTRIES)
    raise KeyError(f"no exercise {exercise!r}; there are: {known}")
