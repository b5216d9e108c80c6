"""torch's CPU random generator, reproduced bit for bit: ``manual_seed``, ``randn``, ``rand``.

torch's default CPU generator (aten/src/ATen/CPUGeneratorImpl.cpp) is an mt19937 seeded with
``init_genrand(seed & 0xffffffff)``; Python's own ``random.Random`` is the same mt19937, so after
writing torch's initial state into one, ``getrandbits(32)`` yields torch's 32-bit draws.

* ``rand``: float32 values are ``(u32 & 0xFFFFFF) * 2**-24``; float64 ones take 53 bits of a
  64-bit draw (two u32, the first one high). ``randint(low, high)`` is ``u32 % (high - low) + low``.
* ``randn`` with fewer than 16 elements (any dtype): the scalar Box–Muller of
  ``at::normal_distribution<double>``, in double precision, which keeps the second value of each
  pair in the generator, across calls, until the next ``manual_seed``.
* ``randn`` with 16 or more elements (``normal_fill``): all uniforms first, then Box–Muller on
  blocks of 16 (8 radii from the first half, 8 angles from the second), the last partial block
  recomputed from 16 fresh uniforms. For float32 on x86-64, torch runs this with AVX2 and the
  Cephes-style ``log256_ps`` / ``sincos256_ps`` of avx_mathfun.h, compiled with fused
  multiply-adds; ``_fill16_avx2`` follows the disassembled instruction sequence of torch 2.13's
  ``NormalFill16<float, true>``, fused multiply-adds included. float64 uses ``std::log``,
  ``std::cos`` and ``std::sin`` in double precision.

Checked against torch 2.13 (CPU capability AVX2) for many seeds, sizes 1..257 and 2-D shapes:
identical bits. Where it can differ:

* float32 ``randn`` of 16 or more values when torch runs another kernel: without AVX2 (ARM
  CPUs, or ``ATEN_CPU_CAPABILITY=default``) torch takes its scalar ``std::log``/``std::cos``
  path, whose values differ from the AVX2 ones (and so from this port) by up to ~1.5e-6.
  AVX-512 machines run the AVX2 kernel (torch 2.13's x86 build has no AVX-512 one). Fewer than
  16 values, ``rand`` and ``randint`` do not depend on the CPU.
* The double-precision paths call the platform's libm (``math.log1p``/``log``/``sin``/``cos``);
  a libm that rounds a double differently from glibc could change a float32 result only when it
  lands within 2⁻²⁹ of a rounding boundary.
"""

from __future__ import annotations

import math
import os
import random as _pyrandom

import numpy as np

from .kernels import fma32

__all__ = ["Generator", "default_generator", "initial_seed", "manual_seed", "seed"]

_F = np.float32


def _f32_bits(h: int) -> np.float32:
    return np.array(h, np.uint32).view(np.float32)[()]


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
        if np_dtype == np.float64:
            return self._normal_fill(n, self._uniform_double, _fill16_double)
        return self._normal_fill(n, self._uniform_float, _fill16_avx2)

    def _normal_fill(self, n: int, uniform, fill16) -> np.ndarray:
        data = uniform(n)
        n_blocks = n // 16
        data[: n_blocks * 16] = fill16(data[: n_blocks * 16].reshape(n_blocks, 16)).reshape(-1)
        if n % 16:  # the last 16 values again, from 16 fresh uniforms
            data[n - 16 :] = fill16(uniform(16).reshape(1, 16)).reshape(-1)
        return data


# ---- float32 Box–Muller on blocks of 16, as torch's AVX2 NormalFill16 computes it ------------

_LOG_P = [_f32_bits(h) for h in (0xBDEBD1B8, 0x3DEF251A, 0xBDFE5D4F, 0x3E11E9BF, 0xBE2AAE50,
                                 0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA)]  # cephes_log_p1..p8


def _log256(x: np.ndarray) -> np.ndarray:
    """avx_mathfun's log256_ps for x in (0, 1], with the compiler's fused multiply-adds."""
    invalid = x <= 0
    x = np.maximum(x, _f32_bits(0x00800000))
    bits = x.view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 127).astype(_F) + _F(1)
    x = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F)
    below = x < _f32_bits(0x3F3504F3)  # sqrt(1/2)
    e = e - np.where(below, _F(1), _F(0))
    x = (x + _F(-1)) + np.where(below, x, _F(0))
    z = x * x
    y = np.full_like(x, _f32_bits(0x3D9021BB))  # cephes_log_p0
    for p in _LOG_P:
        y = fma32(y, x, p)
    y = x * y
    y = fma32(y, z, e * _f32_bits(0xB95E8083))  # + e * q1
    y = fma32(-z, _F(0.5), y)
    x = fma32(e, _F(0.693359375), x + y)  # + e * q2
    return np.where(invalid, _F(np.nan), x)


def _sincos256(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun's sincos256_ps (Cephes reduction by π/4), with fused multiply-adds."""
    sign_sin = np.signbit(theta)
    ax = np.abs(theta)
    j = (ax * _f32_bits(0x3FA2F983)).astype(np.int32)  # 4/π, truncated like cvttps2dq
    j = (j + 1) & ~1
    y = j.astype(_F)
    sign_sin = sign_sin ^ ((j & 4) != 0)
    sin_poly_first = (j & 2) == 0
    sign_cos = (~(j - 2) & 4) != 0
    x = fma32(y, _F(-0.78515625), ax)
    x = fma32(y, _f32_bits(0xB97DA000), x)
    x = fma32(y, _f32_bits(0xB3222169), x)
    z = x * x
    cos_poly = fma32(_f32_bits(0x37CCF5CE), z, _f32_bits(0xBAB6061A))
    cos_poly = fma32(cos_poly, z, _f32_bits(0x3D2AAAA5))
    cos_poly = fma32(z, z * cos_poly, -(z * _F(0.5))) + _F(1)
    sin_poly = fma32(_f32_bits(0xB94CA1F9), z, _f32_bits(0x3C08839E))
    sin_poly = fma32(sin_poly, z, _f32_bits(0xBE2AAAA3))
    sin_poly = fma32(x, z * sin_poly, x)
    s = np.where(sin_poly_first, sin_poly, cos_poly)
    c = np.where(sin_poly_first, cos_poly, sin_poly)
    return np.where(sign_sin, -s, s), np.where(sign_cos, -c, c)


def _fill16_avx2(block: np.ndarray) -> np.ndarray:
    u1 = _F(1) - block[:, :8]
    theta = _f32_bits(0x40C90FDB) * block[:, 8:]  # float32(2π) · u2
    radius = np.sqrt(_log256(u1) * _F(-2))
    s, c = _sincos256(theta)
    # fmadd(n, std=1, mean=0) = n + 0: exact, but it turns -0.0 into +0.0
    return np.concatenate([radius * c, radius * s], axis=1) + _F(0)


def _fill16_double(block: np.ndarray) -> np.ndarray:
    """The scalar NormalFill16<double>: std::log / std::cos / std::sin in double precision."""
    out = np.empty_like(block)
    for row_in, row_out in zip(block, out, strict=True):
        for j in range(8):
            radius = math.sqrt(-2.0 * math.log(1.0 - float(row_in[j])))
            theta = 2.0 * math.pi * float(row_in[j + 8])
            row_out[j] = radius * math.cos(theta)
            row_out[j + 8] = radius * math.sin(theta)
    return out


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """``torch.manual_seed`` / ``torch.random.manual_seed``: reseed the default generator."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()
