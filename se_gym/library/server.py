"""The strict profile's library server: the one process of a program that holds NumPy.

Copied verbatim into every strict library as ``_server.py`` (the writer prepends ``ARRAY_NAME``
and ``TABLE``, the library's function names and the NumPy path each stands for).  The sandbox
worker forks one from a zygote that imported NumPy and this module, and keeps it for its next
programs while it stays fit (``serve(fd)``, then ``reset()``); run as a script (``python _server.py FD``) it serves a client that had no worker
(the library imported outside the sandbox).

A server may serve several programs of one worker in turn (``serve`` then ``reset``): every handle
is dropped between them, NumPy's global state is put back as ``load`` left it, and no function
hands out uninitialised memory (``empty`` and ``empty_like`` give zeros, ``pad``'s ``"empty"`` mode
pads with zeros, a ufunc's or ``clip``'s ``where=`` without ``out=`` leaves zeros), so nothing of an earlier
program shows.  ``serve`` says whether the server is still fit for reuse: after an error, a
call-back or a refused request it is not, and the worker forks a fresh one.

It speaks only the library's API (see ``client.py`` for the wire): a function from ``TABLE``, the
array type's attributes, indexing, ``len``, iteration, its operators and comparisons, ``repr``/
``str``, and the data of an array for the harness.  Every request is checked: an unknown
operation, function, attribute, handle or value is the library's ``TypeError``; nothing else is
ever looked up by name.  Results go back as plain data or handles; errors as a type name and text.
"""
import builtins
import json
import operator
import os
import struct
import sys
import warnings

import numpy as np

try:
    TABLE  # noqa: B018 - set by the writer
except NameError:  # pragma: no cover - used directly from se_gym (tests)
    ARRAY_NAME, TABLE = "ZWCArray", {}

MAX_FRAME = 64 << 20  # bytes of one request
MAX_HANDLES = 1 << 20
_HEAD = struct.Struct(">I")
_CHUNK = 16384  # bytes asked of one read: a whole frame, as a rule


def _not_plain(obj):
    raise TypeError(f"a result of type {type(obj).__name__} cannot be returned")


def _json_codec():
    """The frames' JSON, with json's C encoder and scanner called directly: what json.dumps and
    json.loads add around them (an encoder and its checks made per call, the bytes' encoding
    guessed, whitespace matched) was half of a small frame's cost."""
    make = json.encoder.c_make_encoder
    if make is None:  # (no C accelerator: the pure-Python json)
        dumps = json.JSONEncoder(separators=(",", ":"), default=_not_plain).encode
    else:
        enc = make(None, _not_plain, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)

        def dumps(msg):
            return "".join(enc(msg, 0))
    scan = json.scanner.make_scanner(json.JSONDecoder())

    def loads(body):
        text = body.decode("utf-8")
        try:
            obj, end = scan(text, 0)
        except StopIteration:
            raise ValueError("not JSON") from None
        if end != len(text):
            raise ValueError("not one JSON value")
        return obj

    return dumps, loads


_dumps, _loads = _json_codec()
_TYPES = {"int": int, "float": float, "bool": bool, "complex": complex, "str": str, "object": object, "bytes": bytes}
_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv, "pow": operator.pow,
        "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
_ATTRS = ("shape", "dtype", "size", "ndim", "T")
_ERRORS = ("TypeError", "ValueError", "IndexError", "KeyError", "ZeroDivisionError", "OverflowError",
           "FloatingPointError", "ArithmeticError", "MemoryError", "NotImplementedError", "RuntimeError", "AttributeError")


class Refused(TypeError):
    """A request outside the library's API."""


class _Gone(Exception):
    """The program's connection ended while the server waited on it inside a call-back."""


def _resolve(path):
    for option in path.split("|"):
        obj = np
        try:
            for part in option.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        return obj
    return None


FUNCTIONS = {}  # filled by load(): library name -> NumPy callable
_STATE = {}  # NumPy's global state as load() left it (what reset() puts back)


def _pad(array, pad_width, mode="constant", **kwargs):
    # mode "empty" leaves the padding uninitialised: zeros instead
    return np.pad(array, pad_width, "constant" if isinstance(mode, str) and mode == "empty" else mode, **kwargs)


def _where_call(fn, nin, nout, args, kwargs):
    """A call of a ufunc (or of ``clip``, one in disguise) with ``nin`` inputs and ``nout``
    outputs; where ``where=`` leaves outputs it has no ``out=`` for, those start as zeros (NumPy
    would leave them uninitialised: memory an earlier program may have written)."""
    if "where" in kwargs and not (len(args) > nin and "out" in kwargs):
        given = kwargs["out"] if "out" in kwargs else (tuple(args[nin:]) or None)
        given = given if type(given) is tuple else (given,) * nout
        if any(g is None for g in given):
            probe = fn(*args[:nin], **{k: v for k, v in kwargs.items() if k not in ("where", "out")})
            probes = probe if type(probe) is tuple else (probe,)
            kwargs = dict(kwargs, out=tuple(np.zeros_like(p) if g is None else g for g, p in zip(given, probes)))
            out = fn(*args[:nin], **kwargs)
            if all(isinstance(p, np.generic) for p in probes):  # (scalars in, scalars out, as without out=)
                out = tuple(o[()] for o in out) if type(out) is tuple else out[()]
            return out
    return fn(*args, **kwargs)


def load():
    """Resolve the table once (in the zygote, before any program)."""
    def clip(*args, **kwargs):
        return _where_call(np.clip, 3, 1, args, kwargs)

    safe = {id(np.empty): np.zeros, id(np.empty_like): np.zeros_like, id(np.pad): _pad, id(np.clip): clip}
    for name, path in TABLE.items():
        fn = _resolve(path)
        if fn is not None:
            FUNCTIONS[name] = safe.get(id(fn), fn)
    warnings.simplefilter("ignore")  # NumPy's warnings would go nowhere useful: the program cannot see them
    # (the legacy random state only where the table reaches np.random: putting it back costs 0.1 ms)
    uses_random = any(option.startswith("random.") for path in TABLE.values() for option in path.split("|"))
    _STATE.update(err=np.geterr(), errcall=np.geterrcall(), bufsize=np.getbufsize(), print=np.get_printoptions(),
                  random=np.random.get_state() if uses_random else None)


def reset():
    """Between two programs: NumPy's global state as load() left it (no table function sets any of
    it today; this keeps it so if one ever does: the legacy random state, once the table has
    ``random.*`` functions)."""
    np.seterr(**_STATE["err"])
    np.seterrcall(_STATE["errcall"])
    np.setbufsize(_STATE["bufsize"])
    np.set_printoptions(**_STATE["print"])
    if _STATE["random"] is not None:
        np.random.set_state(_STATE["random"])


def _error_name(e):
    if isinstance(e, np.linalg.LinAlgError):
        return "LinAlgError"
    if isinstance(e, getattr(np, "exceptions", np).AxisError):
        return "AxisError"
    for cls in type(e).__mro__:
        if cls.__name__ in _ERRORS and cls.__module__ == "builtins":
            return cls.__name__
    return "RuntimeError"


class Server:
    def __init__(self, fd):
        self.fd = fd
        self.objects = {}  # handle -> ndarray, or a callable NumPy made (vectorize)
        self.next = 1
        self.fit = True  # fit to serve another program after this one (see serve)
        self.buf = b""  # what was read of the next frame
        self.harness = False  # serving the harness's own connection: it reads results only

    # -- the wire -------------------------------------------------------------------------
    def send(self, msg):
        body = _dumps(msg).encode()
        data = _HEAD.pack(len(body)) + body
        while data:
            data = data[os.write(self.fd, data):]

    def recv(self):
        buf = self.buf
        while len(buf) < 4:
            buf = self._more(buf, _CHUNK)
            if buf is None:
                return None
        n = _HEAD.unpack_from(buf)[0]
        if n > MAX_FRAME:
            self.fit = False
            return None  # (the stream cannot be followed past it: the client is cut off)
        end = 4 + n
        while len(buf) < end:
            buf = self._more(buf, max(end - len(buf), _CHUNK))
            if buf is None:
                return None
        self.buf = buf[end:]  # (an honest client sends nothing more before our reply)
        try:
            msg = _loads(buf[4:end])
        except (ValueError, RecursionError):
            self.fit = False
            raise Refused("request is not valid") from None
        if type(msg) is not list or not msg or type(msg[0]) is not str:
            self.fit = False
            raise Refused("request is not valid")
        return msg

    def _more(self, buf, n):
        """``buf`` and what one read brings (up to ``n`` bytes), or None at the end of the input."""
        chunk = os.read(self.fd, n)
        return buf + chunk if chunk else None

    # -- values ---------------------------------------------------------------------------
    def decode(self, v):
        """A request's value: plain data, handles looked up; anything else is refused."""
        t = type(v)
        if v is None or t is bool or t is int or t is float or t is str:
            return v
        if t is list:
            return [self.decode(x) for x in v]
        if t is not dict or len(v) != 1:
            raise Refused("value not accepted by library functions")
        (tag, p), = v.items()
        if tag == "h" or tag == "f":
            obj = self.objects.get(p) if type(p) is int else None
            if obj is None or isinstance(obj, np.ndarray) != (tag == "h"):
                raise Refused("unknown handle")
            return obj
        if tag == "t" and type(p) is list:
            return tuple(self.decode(x) for x in p)
        if tag == "c" and type(p) is list and len(p) == 2 and all(type(x) in (int, float) for x in p):
            return complex(p[0], p[1])
        if tag == "b" and type(p) is str:
            try:
                return bytes.fromhex(p)
            except ValueError:
                raise Refused("bytes not valid") from None
        if tag == "s" and type(p) is list and len(p) == 3:
            return slice(*[self.decode(x) for x in p])
        if tag == "E" and p == 0:
            return Ellipsis
        if tag == "y" and type(p) is str and p in _TYPES:
            return _TYPES[p]
        if tag == "k" and type(p) is int and p >= 0:
            return self.callback(p)
        raise Refused("value not accepted by library functions")

    def encode(self, x):
        """A result as the client gets it: arrays and NumPy's callables as handles."""
        t = type(x)
        if x is None or t is bool or t is int or t is float or t is str:
            return x
        if isinstance(x, np.ndarray):
            return {"h": self.keep(x)}
        if isinstance(x, np.generic):
            return self.encode(x.item())
        if t is list:
            return [self.encode(v) for v in x]
        if isinstance(x, tuple):
            vals = [self.encode(v) for v in x]
            fields = getattr(type(x), "_fields", None)
            if fields and all(type(f) is str for f in fields):
                return {"n": [list(fields), vals]}
            return {"t": vals}
        if isinstance(x, (bool, int, float, str)):  # (subclasses NumPy may hand out)
            return self.encode(type(x).__mro__[-2](x))
        if t is complex:
            return {"c": [x.real, x.imag]}
        if t is bytes:
            return {"b": x.hex()}
        if isinstance(x, np.dtype):
            return {"d": x.name}
        if t is slice:
            return {"s": [self.encode(x.start), self.encode(x.stop), self.encode(x.step)]}
        if callable(x) and not isinstance(x, type):
            return {"f": self.keep(x)}
        raise TypeError(f"a result of type {t.__name__} cannot be returned")

    def item(self, v):
        """An element taken out of an array: an array, or a scalar for a 0-d result."""
        if isinstance(v, np.ndarray) and v.ndim == 0:
            v = v.item()
        return self.encode(v)

    def keep(self, obj):
        if len(self.objects) >= MAX_HANDLES:
            raise MemoryError("too many live arrays")
        h = self.next
        self.next += 1
        self.objects[h] = obj
        return h

    def array(self, h):
        obj = self.objects.get(h) if type(h) is int else None
        if not isinstance(obj, np.ndarray):
            raise Refused("unknown handle")
        return obj

    def callback(self, k):
        """A callable of the program's: NumPy's calls to it go back to the client."""
        self.fit = False  # (the program's code runs in the middle of our requests: no reuse after)

        def call(*args, **kwargs):
            self.send(["cb", k, [self.encode(a) for a in args], {str(n): self.encode(v) for n, v in kwargs.items()}])
            while True:
                msg = self.recv()
                if msg is None:
                    raise _Gone  # (out of NumPy's call; the harness's connection is served next)
                if msg[0] == "ret" and len(msg) == 2:
                    return self.decode(msg[1])
                if msg[0] == "raise" and len(msg) == 3:
                    name = msg[1] if msg[1] in _ERRORS else "RuntimeError"
                    raise getattr(builtins, name)(str(msg[2])[:2000])
                self.handle(msg)  # the callable itself called the library

        return call

    # -- requests -------------------------------------------------------------------------
    def handle(self, msg):
        try:
            reply = ["ok", self.dispatch(msg)]
        except _Gone:
            raise
        except RecursionError:
            self.fit = False
            reply = ["err", "RuntimeError", "nested too deeply"]
        except Exception as e:
            self.fit = False  # (an error may leave what a reset does not see: a fresh server next)
            reply = ["err", _error_name(e), str(e)[:2000]]
        try:
            self.send(reply)
        except ValueError:  # a result JSON cannot carry (it should not happen)
            self.send(["err", "TypeError", "result cannot be returned"])

    def dispatch(self, msg):
        op, frees, args = msg[0], msg[1] if len(msg) > 1 else None, msg[2:]
        if self.harness and op not in ("show", "list"):
            raise Refused(f"request {op!r} is not the harness's")
        if type(frees) is not list:
            raise Refused("request is not valid")
        for h in frees:
            if type(h) is int:
                self.objects.pop(h, None)
        n = len(args)
        if op == "call" and n == 3 and type(args[0]) is str and type(args[1]) is list and type(args[2]) is dict:
            fn = FUNCTIONS.get(args[0])
            if fn is None:
                raise Refused(f"the library has no function {args[0]!r}")
            a, kw = [self.decode(x) for x in args[1]], {str(k): self.decode(v) for k, v in args[2].items()}
            return self.encode(_where_call(fn, fn.nin, fn.nout, a, kw) if type(fn) is np.ufunc else fn(*a, **kw))
        if op == "fcall" and n == 3 and type(args[1]) is list and type(args[2]) is dict:
            fn = self.objects.get(args[0]) if type(args[0]) is int else None
            if fn is None or isinstance(fn, np.ndarray):
                raise Refused("unknown handle")
            return self.encode(fn(*[self.decode(a) for a in args[1]], **{str(k): self.decode(v) for k, v in args[2].items()}))
        if op == "defs" and n == 2 and type(args[0]) is list and type(args[1]) is list and args[1] and args[1][0] != "defs":
            # arrays the client made under handles of its own (negative), then its request
            for d in args[0]:
                if (type(d) is not list or len(d) != 3 or type(d[0]) is not int or d[0] >= 0 or d[0] in self.objects
                        or type(d[1]) is not str or type(d[2]) is not list):
                    raise Refused("request is not valid")
                fn = FUNCTIONS.get(d[1])
                if fn is None:
                    raise Refused(f"the library has no function {d[1]!r}")
                made = fn(*[self.decode(a) for a in d[2]])
                if not isinstance(made, np.ndarray) or len(self.objects) >= MAX_HANDLES:
                    raise Refused("request is not valid")
                self.objects[d[0]] = made
            return self.dispatch(args[1])
        if op == "sync" and n == 0:  # (the client's deferred arrays came with it: see the client's flush)
            return self.encode(None)
        if op == "new" and n == 1:
            return self.encode(np.asarray(self.decode(args[0])))
        if op == "dteq" and n == 2 and type(args[0]) is str:
            try:
                return str(np.dtype(args[0])) == str(np.dtype(self.decode(args[1])))
            except TypeError:
                return False
        if op == "dtinfo" and n == 2 and args[1] in ("kind", "itemsize"):
            return getattr(np.dtype(str(args[0])), args[1])
        if not n or op not in ("attr", "repr", "str", "len", "iter", "get", "set", "op", "list", "show"):
            raise Refused(f"unknown request {op!r}")
        a = self.array(args[0])
        if op == "attr" and n == 2 and args[1] in _ATTRS:
            v = getattr(a, args[1])
            return {"d": v.name} if args[1] == "dtype" else self.encode(v)
        if op == "get" and n == 2:
            return self.item(a[self.decode(args[1])])
        if op == "set" and n == 3:
            a[self.decode(args[1])] = self.decode(args[2])
            return None
        if op == "op" and n == 4 and args[1] in _OPS and type(args[3]) is bool:
            other, f = self.decode(args[2]), _OPS[args[1]]
            return self.encode(f(other, a) if args[3] else f(a, other))
        if n == 1:
            if op == "repr":
                return f"{ARRAY_NAME}({a.tolist()!r})"
            if op == "str":
                return str(a)
            if op == "len":
                return len(a)
            if op == "iter":
                return [self.item(v) for v in a]
            if op == "list":
                return self.encode(a.tolist())
            if op == "show":
                return [str(a), self.encode(a.tolist())]
        raise Refused(f"request {op!r} is not valid")

    def serve(self):
        while True:
            try:
                msg = self.recv()
            except Refused as e:
                self.send(["err", "TypeError", str(e)])
                continue
            if msg is None:
                return
            self.handle(msg)


def serve(fd, harness=None):
    """Answer one client on ``fd`` until it closes its end; then, if given, the harness on
    ``harness`` (the strict harness's own connection, issue 42): it reads the arrays the answer
    returned (``show`` and ``list`` only), with the program's handles, once the answer's process
    has closed ``fd``.  A connection of its own, so nothing the answer left on ``fd`` (a partial
    frame, requests whose replies it never read) stands between the harness and its replies.

    Args:
        fd: the socket of the program's end.
        harness: the socket of the harness's end, or None.

    Returns:
        True when nothing happened that ``reset`` might not undo (no error, call-back or refused
        request): the server may serve another program after ``reset()``.
    """
    server = Server(fd)
    try:
        for conn in (fd, harness):
            if conn is None:
                continue
            server.fd, server.buf, server.harness = conn, b"", conn == harness
            try:
                server.serve()
            except (ConnectionError, _Gone):
                # the program went away before reading a reply (a broken pipe), with replies it never
                # read (the connection reset), or in the middle of a call-back
                server.fit = False
    finally:
        server.objects.clear()  # every handle goes now, cycles or not
    return server.fit


if __name__ == "__main__":
    load()
    serve(int(sys.argv[1]))
