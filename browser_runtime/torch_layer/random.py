"""torch's CPU random generator: ``manual_seed``, ``rand``, ``randint`` and ``randn``.

torch's default CPU generator (aten/src/ATen/CPUGeneratorImpl.cpp) is an mt19937 seeded with
``init_genrand(seed & 0xffffffff)``; Python's own ``random.Random`` is the same mt19937, so after
writing torch's initial state into one, ``getrandbits(32)`` yields torch's 32-bit draws.

* ``rand``: float32 values are ``(u32 & 0xFFFFFF) * 2**-24``; float64 ones take 53 bits of a
  64-bit draw (two u32, the first one high). ``randint(low, high)`` is ``u32 % (high - low) + low``.
  Bit-identical to torch on every CPU.
* ``randn`` with fewer than 16 elements (any dtype): the scalar Box–Muller of
  ``at::normal_distribution<double>``, in double precision, which keeps the second value of each
  pair in the generator, across calls, until the next ``manual_seed``. Bit-identical to torch on
  every CPU (one rounding of a double to float32), so the lessons draw their inputs this way.
* ``randn`` with 16 or more elements (torch's ``normal_fill``): all uniforms first, then
  Box–Muller on blocks of 16 (8 radii from the first half, 8 angles from the second), the last
  partial block recomputed from 16 fresh uniforms. The same draws as torch, but torch computes
  the Box–Muller step with kernels chosen by the CPU (AVX2/AVX-512 polynomials, or libm without
  them), so its float32 values differ between CPUs by up to ~1.5e-6. The layer computes it in
  double precision and rounds once: within ``16 ε₃₂ · max(1, |x|)`` of torch on any CPU.
"""

from __future__ import annotations

import math
import os
import random as _pyrandom

import numpy as np

__all__ = ["Generator", "default_generator", "initial_seed", "manual_seed", "seed"]

_F = np.float32


class Generator:
    """The default CPU generator: mt19937 state plus the cached second normal sample."""

    def __init__(self, seed: int | None = None) -> None:
        self._mt = _pyrandom.Random()
        self._seed = 0
        self._cached_normal: float | None = None
        self.manual_seed(int.from_bytes(os.urandom(8), "little") if seed is None else seed)

    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed) & 0xFFFF_FFFF_FFFF_FFFF
        state = [seed & 0xFFFF_FFFF]
        for j in range(1, 624):  # mt19937 init_genrand
            prev = state[-1]
            state.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFF_FFFF)
        self._mt.setstate((3, (*state, 624), None))
        self._seed = seed
        self._cached_normal = None
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        self.manual_seed(int.from_bytes(os.urandom(8), "little"))
        return self._seed

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"

    # -- raw draws ----------------------------------------------------------------------------

    def _u32(self, n: int) -> np.ndarray:
        if n == 0:
            return np.zeros(0, np.uint32)
        # getrandbits(32 * n) packs the n draws little-end first
        raw = self._mt.getrandbits(32 * n).to_bytes(4 * n, "little")
        return np.frombuffer(raw, dtype="<u4").astype(np.uint32)

    def _uniform_float(self, n: int) -> np.ndarray:
        return (self._u32(n) & np.uint32(0xFFFFFF)).astype(_F) * _F(2.0**-24)

    def _uniform_double(self, n: int) -> np.ndarray:
        words = self._u32(2 * n).astype(np.uint64).reshape(n, 2)
        bits = ((words[:, 0] << np.uint64(32)) | words[:, 1]) & np.uint64((1 << 53) - 1)
        return bits.astype(np.float64) * (1.0 / (1 << 53))

    # -- distributions ------------------------------------------------------------------------

    def rand(self, n: int, np_dtype: np.dtype) -> np.ndarray:
        if np_dtype == np.float64:
            return self._uniform_double(n)
        return self._uniform_float(n)

    def _normal_scalar(self) -> float:
        """at::normal_distribution<double>: Box–Muller, second value cached in the generator."""
        if self._cached_normal is not None:
            value, self._cached_normal = self._cached_normal, None
            return value
        u1, u2 = self._uniform_double(2)
        r = math.sqrt(-2.0 * math.log1p(-float(u2)))
        theta = 2.0 * math.pi * float(u1)
        self._cached_normal = r * math.sin(theta)
        return r * math.cos(theta)

    def randn(self, n: int, np_dtype: np.dtype) -> np.ndarray:
        if n < 16:
            return np.array([self._normal_scalar() for _ in range(n)], np.float64).astype(np_dtype)
        uniform = self._uniform_double if np_dtype == np.float64 else self._uniform_float
        data = uniform(n).astype(np.float64)
        n_blocks = n // 16
        data[: n_blocks * 16] = _fill16(data[: n_blocks * 16].reshape(n_blocks, 16)).reshape(-1)
        if n % 16:  # the last 16 values again, from 16 fresh uniforms
            data[n - 16 :] = _fill16(uniform(16).astype(np.float64).reshape(1, 16)).reshape(-1)
        return data.astype(np_dtype)


def _fill16(block: np.ndarray) -> np.ndarray:
    """torch's ``normal_fill_16`` on rows of 16 uniforms, in double precision."""
    # u₁ ∈ (0, 1] for the log, u₂ for the angle
    u1, u2 = 1.0 - block[:, :8], block[:, 8:]
    # r = √(−2 log u₁),  θ = 2π u₂
    with np.errstate(divide="ignore"):
        radius = np.sqrt(-2.0 * np.log(u1))
    theta = 2.0 * np.pi * u2
    # (r cos θ, r sin θ): the first 8 values, then the second 8
    return np.concatenate([radius * np.cos(theta), radius * np.sin(theta)], axis=1)


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """``torch.manual_seed`` / ``torch.random.manual_seed``: reseed the default generator."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()
