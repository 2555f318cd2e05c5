"""Element-wise maths: one value in, one value out, for every element."""
from __future__ import annotations

from .common import S, iscalar, ivec

FL = "a list of floats"
_UNARY = {  # key: (input kind, what each element becomes)
    "abs": ("f", "its absolute value"),
    "absolute": ("f", "its absolute value"),
    "fabs": ("f", "its absolute value as a float"),
    "sign": ("f", "its sign (-1.0, 0.0 or 1.0)"),
    "positive": ("f", "itself (unary plus, as a new list)"),
    "negative": ("f", "its negation"),
    "reciprocal": ("fp", "its reciprocal 1/v"),
    "square": ("f", "its square"),
    "sqrt": ("fp", "its square root"),
    "cbrt": ("f", "its cube root"),
    "exp": ("fs", "e raised to it"),
    "exp2": ("fs", "2 raised to it"),
    "expm1": ("fs", "exp(v) - 1, computed accurately"),
    "log": ("fp", "its natural logarithm"),
    "log10": ("fp", "its base-10 logarithm"),
    "log2": ("fp", "its base-2 logarithm"),
    "log1p": ("fp", "log(1 + v), computed accurately"),
    "sin": ("f", "its sine (v in radians)"),
    "cos": ("f", "its cosine (v in radians)"),
    "tan": ("fu", "its tangent (v in radians)"),
    "arcsin": ("fu", "its inverse sine in radians"),
    "arccos": ("fu", "its inverse cosine in radians"),
    "arctan": ("f", "its inverse tangent in radians"),
    "asin": ("fu", "its inverse sine in radians"),
    "acos": ("fu", "its inverse cosine in radians"),
    "atan": ("f", "its inverse tangent in radians"),
    "sinh": ("fs", "its hyperbolic sine"),
    "cosh": ("fs", "its hyperbolic cosine"),
    "tanh": ("f", "its hyperbolic tangent"),
    "arcsinh": ("f", "its inverse hyperbolic sine"),
    "arccosh": ("fg1", "its inverse hyperbolic cosine"),
    "arctanh": ("fu", "its inverse hyperbolic tangent"),
    "asinh": ("f", "its inverse hyperbolic sine"),
    "acosh": ("fg1", "its inverse hyperbolic cosine"),
    "atanh": ("fu", "its inverse hyperbolic tangent"),
    "degrees": ("f", "the angle converted from radians to degrees"),
    "radians": ("f", "the angle converted from degrees to radians"),
    "deg2rad": ("f", "the angle converted from degrees to radians"),
    "rad2deg": ("f", "the angle converted from radians to degrees"),
    "sinc": ("f", "the normalized sinc sin(pi v)/(pi v)"),
    "rint": ("f", "the nearest integer value (as a float)"),
    "floor": ("f", "its floor"),
    "ceil": ("f", "its ceiling"),
    "trunc": ("f", "the value truncated towards zero"),
    "spacing": ("fp", "the distance to the next representable float"),
    "nan_to_num": ("f", "the value with any nan or infinity replaced by a finite number"),
}

_BINARY = {  # key: (kind of x, kind of y, how x and y combine)
    "add": ("f", "f", "the sum x + y"),
    "subtract": ("f", "f", "the difference x - y"),
    "multiply": ("f", "f", "the product x * y"),
    "divide": ("f", "fp", "the quotient x / y"),
    "true_divide": ("f", "fp", "the true quotient x / y"),
    "power": ("fp", "fs", "x raised to the power y"),
    "pow": ("fp", "fs", "x raised to the power y"),
    "arctan2": ("f", "f", "the angle arctan(x / y) that respects the quadrant of the point (y, x)"),
    "atan2": ("f", "f", "the angle arctan(x / y) that respects the quadrant of the point (y, x)"),
    "hypot": ("f", "f", "the hypotenuse sqrt(x**2 + y**2)"),
    "logaddexp": ("fs", "fs", "log(exp(x) + exp(y))"),
    "logaddexp2": ("fs", "fs", "log2(2**x + 2**y)"),
    "maximum": ("f", "f", "the larger of x and y"),
    "minimum": ("f", "f", "the smaller of x and y"),
    "fmax": ("f", "f", "the larger of x and y (ignoring nan)"),
    "fmin": ("f", "f", "the smaller of x and y (ignoring nan)"),
    "copysign": ("f", "f", "the magnitude of x with the sign of y"),
    "nextafter": ("f", "f", "the next float after x in the direction of y"),
}

_INTEGER = {  # integer in, integer out
    "floor_divide": ("i", "ip", "the floor of x / y"),
    "mod": ("i", "ip", "the remainder of x modulo y (sign of y)"),
    "remainder": ("i", "ip", "the remainder of x modulo y (sign of y)"),
    "fmod": ("i", "ip", "the C-style remainder of x / y (sign of x)"),
    "gcd": ("ip", "ip", "the greatest common divisor of x and y"),
    "lcm": ("ip", "ip", "the least common multiple of x and y"),
}


def _specs():
    out = []
    for key, (kind, what) in _UNARY.items():
        does = f"replaces every element v of x by {what}"
        out.append(S(key, f"x:{kind}", f"return [float(v) for v in np.{key}(x)]", does + " and returns the results as a list", FL))
        out.append(S(key, f"x:{kind}", f"return np.{key}(x)", does, "an array of floats"))
    for key, (kx, ky, what) in _BINARY.items():
        does = f"computes, element by element, {what} for the two equally long lists x and y"
        out.append(S(key, f"x:{kx}, y:{ky}", f"return [float(v) for v in np.{key}(x, y)]", does + ", returning a list", FL))
        out.append(S(key, f"x:{kx}, y:{ky}", f"return np.{key}(x, y)", does, "an array of floats"))
    for key, (kx, ky, what) in _INTEGER.items():
        does = f"computes, element by element, {what} for the integer lists x and y"
        out.append(S(key, f"x:{kx}, y:{ky}", f"return [int(v) for v in np.{key}(x, y)]", does, "a list of integers"))
        out.append(S(key, f"x:{kx}, y:{ky}", f"return np.{key}(x, y)", does, "an array of integers"))
    out += [
        S("signbit", "x:f", "return [bool(v) for v in np.signbit(x)]",
          "tells for every element of x whether its sign bit is set (it is negative)", "a list of booleans"),
        S("real", "z:c", "return [float(v) for v in np.real(z)]", "returns the real part of every complex number in z", FL),
        S("imag", "z:c", "return [float(v) for v in np.imag(z)]", "returns the imaginary part of every complex number in z", FL),
        S("conj", "z:c", "return [complex(v) for v in np.conj(z)]", "returns the complex conjugate of every number in z", "a list of complex numbers"),
        S("conjugate", "z:c", "return [complex(v) for v in np.conjugate(z)]", "returns the complex conjugate of every number in z", "a list of complex numbers"),
        S("round", "x:f, d:k", "return [float(v) for v in np.round(x, d)]",
          "rounds every element of x to d decimal places (halves to even)", FL, d=(iscalar(0, 2), "a number of decimals (0 to 2)")),
        S("around", "x:f, d:k", "return [float(v) for v in np.around(x, d)]",
          "rounds every element of x to d decimal places (halves to even)", FL, d=(iscalar(0, 2), "a number of decimals (0 to 2)")),
        S("clip", "x:f, lo:x, hi:x", "return [float(v) for v in np.clip(x, lo, hi)]",
          "limits every element of x to the interval [lo, hi]", FL, valid=lambda a: a["lo"] < a["hi"]),
        S("clip", "x:f, lo:x, hi:x", "return np.clip(x, lo, hi)",
          "clips the values of x into the range from lo to hi", "an array of floats", valid=lambda a: a["lo"] < a["hi"]),
        S("modf", "x:f", "frac, whole = np.modf(x)\nreturn [float(v) for v in frac]",
          "returns the fractional part of every element of x (keeping its sign)", FL),
        S("modf", "x:f", "frac, whole = np.modf(x)\nreturn [float(v) for v in whole]",
          "returns the integral part of every element of x, as floats", FL),
        S("frexp", "x:fp", "mantissa, exponent = np.frexp(x)\nreturn [int(v) for v in exponent]",
          "splits every element of x into mantissa * 2**exponent and returns the exponents", "a list of integers"),
        S("frexp", "x:fp", "mantissa, exponent = np.frexp(x)\nreturn [float(v) for v in mantissa]",
          "splits every element of x into mantissa * 2**exponent and returns the mantissas", FL),
        S("ldexp", "x:f, e:i", "return [float(v) for v in np.ldexp(x, e)]",
          "computes x * 2**e element by element", FL, e=(ivec(-4, 4), "a list of small integers")),
        S("divmod", "x:ip, y:ip", "q, r = np.divmod(x, y)\nreturn [[int(v) for v in q], [int(v) for v in r]]",
          "returns the element-wise floor quotients and remainders of x by y", "a list of two lists of integers: quotients, then remainders"),
        S("heaviside", "x:i, h0:x", "return [float(v) for v in np.heaviside(x, h0)]",
          "applies the Heaviside step function to every element of x, using h0 where the element is 0", FL,
          x=(ivec(-3, 3), "a list of integers")),
    ]
    return out


SPECS = _specs()
