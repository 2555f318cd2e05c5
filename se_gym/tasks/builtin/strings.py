"""Text forms of arrays and numbers, and dtype conversion."""
from __future__ import annotations

from .common import S, iscalar

SPECS = [
    S("array2string", "x:i", "return np.array2string(np.array(x), separator=', ')",
      "returns the text form of x as an array, with elements separated by a comma and a space", "a string"),
    S("array_repr", "x:i", "return np.array_repr(np.array(x))", "returns the repr text of x as an array, like array([1, 2])", "a string"),
    S("array_str", "x:f", "return np.array_str(np.array(x))", "returns the NumPy-style print text of x", "a string"),
    S("base_repr", "n:k, base:k", "return np.base_repr(n, base)", "returns the integer n written in the given base (digits, then letters)",
      "a string", n=(iscalar(0, 5000), "a non-negative integer"), base=(iscalar(2, 36), "a base from 2 to 36")),
    S("binary_repr", "n:k, width:k", "return np.binary_repr(n, width=width)",
      "returns the binary digits of n, left-padded with zeros to width characters", "a string",
      n=(iscalar(0, 255), "a non-negative integer"), width=(iscalar(8, 12), "a width")),
    S("binary_repr", "n:k", "return np.binary_repr(n)", "returns the binary form of the integer n (with a minus sign when negative)",
      "a string", n=(iscalar(-300, 300), "an integer")),
    S("astype", "x:f", "return [int(v) for v in np.astype(np.array(x), 'int64')]",
      "converts the floats of x to 64-bit integers (truncating towards zero)", "a list of integers"),
    S("astype", "x:i", "return [float(v) for v in np.astype(np.array(x), 'float64') / 2]",
      "converts x to floats and halves every element", "a list of floats"),
]
