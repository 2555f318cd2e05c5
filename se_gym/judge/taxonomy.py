"""The paper's error taxonomy, derived from how an answer failed."""
from __future__ import annotations

import re

from .types import ErrorType

# NumPy array methods and attributes models reach for on the library's array type
_ARRAY_ATTRS = frozenset(
    "tolist astype reshape flatten ravel item real imag fill mean sum min max argmin argmax std var "
    "copy sort argsort round clip cumsum cumprod prod any all nonzero squeeze transpose dot trace "
    "diagonal conj repeat take put view tobytes tostring data flat strides itemsize nbytes base".split()
)
_TRACEBACK_LAST = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)?):\s?(?P<msg>.*)$")


def parse_traceback(stderr: str) -> tuple[str | None, str | None]:
    """``(exception type, message)`` from the last exception line of a traceback in ``stderr``."""
    if not stderr or "Traceback" not in stderr:
        return None, None
    tail = stderr[stderr.rfind("Traceback") :].strip().splitlines()
    for line in reversed(tail):
        if line.startswith((" ", "\t")) or not line.strip():
            continue
        m = _TRACEBACK_LAST.match(line.strip())
        if m:
            return m.group("type").rsplit(".", 1)[-1], m.group("msg")
        if re.fullmatch(r"[A-Za-z_][\w.]*", line.strip()):
            return line.strip().rsplit(".", 1)[-1], ""
    return None, None


def classify_exception(exc_type: str | None, message: str | None, package: str = "zwc", array_type: str = "ZWCArray") -> ErrorType:
    """Map an exception raised by an answer to the taxonomy."""
    t, msg = exc_type or "", message or ""
    if t == "AttributeError":
        if f"'{array_type}' object has no attribute" in msg:
            return ErrorType.ARRAY_ATTRIBUTE_HALLUCINATION
        if re.search(rf"module '{re.escape(package)}(\.\w+)?' has no attribute", msg) or "'function' object has no attribute" in msg:
            return ErrorType.LIBRARY_FUNCTION_HALLUCINATION
        m = re.search(r"object has no attribute '(\w+)'", msg)
        if m and m.group(1) in _ARRAY_ATTRS:
            return ErrorType.ARRAY_ATTRIBUTE_HALLUCINATION
        return ErrorType.OTHER
    if t in ("ImportError", "ModuleNotFoundError"):
        if package in msg:
            return ErrorType.LIBRARY_FUNCTION_HALLUCINATION
        return ErrorType.OTHER
    if t in ("TypeError", "ValueError", "UFuncTypeError", "AxisError"):
        if array_type in msg and re.search(r"unsupported operand|bad operand|not supported between|unhashable|not callable|not iterable|not JSON serializable|cannot be interpreted", msg):
            return ErrorType.NATIVE_PYTHON_INCOMPATIBILITY
        if re.search(r"only (length-1|0-dimensional|size-1) arrays|truth value of an array|argument must be a string or a (real )?number, not '%s'|object of type '%s' has no len" % (array_type, array_type), msg):
            return ErrorType.NATIVE_PYTHON_INCOMPATIBILITY
        if re.search(r"unexpected keyword argument|required positional argument|positional argument|takes \d+|takes from|missing \d+|got multiple values|invalid keyword|argument", msg):
            return ErrorType.PARAMETER_ERROR
        if t == "AxisError" or "axis" in msg:
            return ErrorType.PARAMETER_ERROR
        return ErrorType.OTHER
    return ErrorType.OTHER
