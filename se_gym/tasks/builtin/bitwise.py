"""Bit operations on integers."""
from __future__ import annotations

from .common import S, ivec

IL = "a list of integers"
SH = (ivec(0, 4), "a list of small non-negative shift amounts")
SPECS = []
for key, what in {
    "bitwise_and": "the bitwise AND", "bitwise_or": "the bitwise OR", "bitwise_xor": "the bitwise XOR (exclusive or)",
}.items():
    SPECS.append(S(key, "x:u8, y:u8", f"return [int(v) for v in np.{key}(x, y)]",
                   f"computes {what} of every pair x[i], y[i]", IL))
    SPECS.append(S(key, "x:u8, y:u8", f"return np.{key}(x, y)", f"returns {what} of the integer lists x and y element by element",
                   "an array of integers"))
for key in ("bitwise_not", "bitwise_invert", "invert"):
    SPECS.append(S(key, "x:i", f"return [int(v) for v in np.{key}(x)]",
                   "flips every bit of every integer of x (two's complement, so v becomes -v - 1)", IL))
SPECS.append(S("bitwise_count", "x:u8", "return [int(v) for v in np.bitwise_count(x)]",
               "counts the 1-bits in the binary form of every element of x", IL))
SPECS.append(S("bitwise_count", "x:u8", "return np.bitwise_count(x)", "returns the population count (number of set bits) of each element of x",
               "an array of integers"))
for key, side in {"left_shift": "left", "bitwise_left_shift": "left", "right_shift": "right", "bitwise_right_shift": "right"}.items():
    SPECS.append(S(key, "x:u8, s:u8", f"return [int(v) for v in np.{key}(x, s)]",
                   f"shifts the bits of every x[i] to the {side} by s[i] places", IL, s=SH))
