"""``ast.parse`` for a judge used from several threads at once."""
from __future__ import annotations

import ast
import sys
import threading

# CPython before 3.11.8 (and 3.12 before 3.12.2) counts the depth of the tree being built in one
# counter per interpreter, not per call (python/cpython#106905): when a garbage collection in the
# middle of one parse lets another thread parse, one fails with "SystemError: AST constructor
# recursion depth mismatch" (seen judging from 3 threads on 3.11.7: tests/test_chaos.py), and
# where a caller takes any error for "not parsable" that is a wrong verdict.  There, parses take
# turns; elsewhere this is ast.parse.  (3.10 is not known to be affected; turns cost it nothing.)
TAKE_TURNS = sys.version_info < (3, 11, 8) or (3, 12) <= sys.version_info < (3, 12, 2)
_turn = threading.RLock()


def parse(source: str, mode: str = "exec") -> ast.AST:
    if not TAKE_TURNS:
        return ast.parse(source, mode=mode)
    with _turn:
        return ast.parse(source, mode=mode)
