"""The strict profile's library in the answer's process: a thin client, standard library only.

Copied verbatim into every strict library as ``_client.py`` (the writer prepends ``ARRAY_NAME``).
It holds the few functions of ``os`` it uses, not the module (issue 42: the module led the answer to
``sys`` and every module loaded).
NumPy is never imported here: every call crosses to a library server (``server.py``, a process of
its own that holds NumPy, reset between programs) over a socket, one request and one reply at a time.
Arrays are opaque handles (numbers the server gives out); arguments are turned into plain data
(numbers, strings, bytes, lists/tuples, None, slices, builtin types, handles) and anything else
is a ``TypeError`` here, and again on the server.  Errors come back as text in the library's own
exception types.  Callables given to the library (``piecewise``, ``vectorize``) stay here: the
server calls them back through the same socket (a re-entrant request loop).

Wire: a frame is a 4-byte big-endian length and a JSON body.  Requests ``[op, frees, *args]``,
or ``["defs", [], [[handle, function, args], ...], request]``: arrays made with handles of the
client's own (negative) before the request (see ``_deferred``).  Replies ``["ok", value]`` or
``["err", type, text]``; the server's call-backs ``["cb", id, args, kwargs]``, answered by
``["ret", value]`` or ``["raise", type, text]``.  Values: JSON's own, and single-key objects for
the rest (see ``_encode``).
"""
import collections as _collections
import json as _json
import stat as _stat
import struct as _struct
from os import fstat as _fstat
from os import getpid as _getpid
from os import read as _read
from os import write as _write

try:
    from ._scalars import make_types as _scalar_types
except ImportError:  # used directly from se_gym (tests)
    from se_gym.library.scalars import make_types as _scalar_types

try:
    ARRAY_NAME  # noqa: B018 - set by the writer
except NameError:  # used directly from se_gym (tests)
    ARRAY_NAME = "ZWCArray"
try:
    ARRAY_FUNCTIONS  # noqa: B018 - set by the writer: the library's names of np.array/np.asarray
except NameError:
    ARRAY_FUNCTIONS = ()

SERVER_FD = 4  # where the sandbox worker puts this program's server socket
MAX_FRAME = 256 << 20
_HEAD = _struct.Struct(">I")
_CHUNK = 16384  # bytes asked of one read: a whole reply, as a rule


def _not_plain(obj):
    raise TypeError(f"values of type {type(obj).__name__} are not accepted by library functions")


def _json_codec():
    # json's C encoder and scanner called directly (see the server's _json_codec: the same frames)
    make = _json.encoder.c_make_encoder
    if make is None:
        dumps = _json.JSONEncoder(separators=(",", ":"), default=_not_plain).encode
    else:
        enc = make(None, _not_plain, _json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)

        def dumps(msg):
            return "".join(enc(msg, 0))
    scan = _json.scanner.make_scanner(_json.JSONDecoder())

    def loads(body):
        text = body.decode("utf-8")
        try:
            obj, end = scan(text, 0)
        except StopIteration:
            raise RuntimeError("library server: reply is not valid") from None
        if end != len(text):
            raise RuntimeError("library server: reply is not valid")
        return obj

    return dumps, loads


_dumps, _loads = _json_codec()


class LinAlgError(ValueError):
    """A linear-algebra failure (singular matrix, no convergence)."""


class AxisError(ValueError, IndexError):
    """An axis out of range."""


_ERRORS = {c.__name__: c for c in (TypeError, ValueError, IndexError, KeyError, ZeroDivisionError, OverflowError,
                                   FloatingPointError, ArithmeticError, MemoryError, NotImplementedError, RuntimeError,
                                   AttributeError, LinAlgError, AxisError)}


class _Channel:
    """This process's connection to its library server (made on first use)."""

    def __init__(self):
        self.fd = -1
        self.pid = -1  # the process that made the connection (a fork needs its own server)
        self.lock = None  # (a spawned server only: the sandbox's programs run no threads)
        self.frees = []
        self.buf = b""  # what was read of the next reply
        self.defs = []  # arrays made here, sent with the next request (see _deferred)
        self.local = 0  # the last handle we gave out ourselves (negative numbers)
        self.depth = 0  # requests under way (a call-back's own requests make it 2 or more)
        self.callbacks = []  # the program's callables handed to the server (by position)

    def connect(self):
        if self.fd >= 0 and self.pid == _getpid():
            return
        if self.fd < 0:
            try:
                if _stat.S_ISSOCK(_fstat(SERVER_FD).st_mode):
                    self.fd, self.pid, self.buf = SERVER_FD, _getpid(), b""  # the sandbox worker's: forked for this program
                    self.defs, self.local, self.depth = [], 0, 0
                    return
            except OSError:
                pass
        self.spawn()

    def spawn(self):
        """No worker gave us a server (the library imported outside the sandbox, say in a test):
        start one, ended when this channel is (or at exit)."""
        import os
        import socket
        import subprocess
        import sys
        import threading
        import weakref

        mine, theirs = socket.socketpair()
        if mine.fileno() == SERVER_FD:  # never where a sandbox puts its server: another library's
            moved = mine.dup()          # client in this process would take this server for its own
            mine.close()
            mine = moved
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_server.py")
        proc = subprocess.Popen([sys.executable, script, str(theirs.fileno())], pass_fds=[theirs.fileno()])
        theirs.close()
        self.fd, self.pid, self.lock = mine.fileno(), _getpid(), threading.RLock()
        self.frees, self.callbacks, self.buf = [], [], b""  # (a fork's copies name the parent's server's objects)
        self.defs, self.local, self.depth = [], 0, 0
        self.stop = weakref.finalize(self, _stop, mine, proc)

    def close(self):
        """End the server this channel spawned, if any (a later request spawns another)."""
        stop, self.stop = getattr(self, "stop", None), None
        if stop is not None:
            stop()
            self.fd, self.pid, self.lock = -1, -1, None

    def send(self, msg):
        body = _dumps(msg).encode()
        data = _HEAD.pack(len(body)) + body
        while data:
            data = data[_write(self.fd, data):]

    def recv(self):
        buf = self.buf
        while len(buf) < 4:
            buf = self._more(buf, _CHUNK)
        n = _HEAD.unpack_from(buf)[0]
        if n > MAX_FRAME:
            raise RuntimeError("library server: reply too large")
        end = 4 + n
        while len(buf) < end:
            buf = self._more(buf, max(end - len(buf), _CHUNK))
        self.buf = buf[end:]
        return _loads(buf[4:end])

    def _more(self, buf, n):
        """``buf`` and what one read brings (up to ``n`` bytes): a reply in one read, as a rule."""
        chunk = _read(self.fd, n)
        if not chunk:
            raise RuntimeError("library server is gone")
        return buf + chunk

    def request(self, op, *args):
        self.connect()
        if self.lock is None:
            return self._request(op, args)
        with self.lock:
            return self._request(op, args)

    def _request(self, op, args):
        if op == "call" and not self.depth and args[0] in ARRAY_FUNCTIONS and not args[2] and _deferred(args[1]):
            # an array of plain numbers that NumPy cannot fail to make: no round trip of its own,
            # it goes with the next request under a handle of ours
            self.local -= 1
            self.defs.append([self.local, args[0], args[1]])
            return _array(self.local)
        frees, self.frees = self.frees, []
        if self.defs:
            defs, self.defs = self.defs, []
            self.send(["defs", [], defs, [op, frees, *args]])  # (frees after defs: one may name a def)
        else:
            self.send([op, frees, *args])
        self.depth += 1
        try:
            return self._replies()
        finally:
            self.depth -= 1

    def _replies(self):
        while True:
            msg = self.recv()
            kind = msg[0]
            if kind == "ok":
                return _decode(msg[1])
            if kind == "err":
                raise _ERRORS.get(msg[1], RuntimeError)(msg[2])
            if kind == "cb":  # the server calls one of the program's callables
                try:
                    fn = self.callbacks[msg[1]]
                    args = [_decode(a) for a in msg[2]]
                    kwargs = {k: _decode(v) for k, v in msg[3].items()}
                    reply = ["ret", _encode(fn(*args, **kwargs))]
                except Exception as e:
                    reply = ["raise", type(e).__name__ if type(e).__name__ in _ERRORS else "RuntimeError", str(e)[:2000]]
                self.send(reply)
            else:
                raise RuntimeError("library server: unexpected reply")


_DEFER_MAX = 4096  # numbers in one deferred array at most


def _deferred(args):
    """Whether ``array(*args)`` (already encoded) is certain to succeed on the server: one nested
    list, rectangular, of ints within int64, floats and bools, small.  Anything else (ragged
    lists, strings, keywords, handles...) is made at once, where its errors belong."""
    if len(args) != 1 or type(args[0]) is not list:
        return False
    level, count = [args[0]], 0
    while level:
        if type(level[0]) is list:
            n = len(level[0])
            if any(type(x) is not list or len(x) != n for x in level):
                return False
            level = [y for x in level for y in x]
        else:
            for x in level:
                t = type(x)
                if not (t is float or t is bool or (t is int and -(1 << 62) < x < (1 << 62))):
                    return False
            count += len(level)
            break
        if len(level) > _DEFER_MAX:
            return False
    return count <= _DEFER_MAX


def _stop(sock, proc):
    sock.close()  # the server reads the end of its input and exits
    try:
        proc.wait(timeout=10)
    except Exception:
        proc.kill()
        proc.wait()


_CHANNEL = _Channel()
_request = _CHANNEL.request
_BUILTIN_TYPES = {int: "int", float: "float", bool: "bool", complex: "complex", str: "str", object: "object", bytes: "bytes"}


def _encode(x):
    """A value as the wire carries it; TypeError for anything that is not plain data."""
    t = type(x)
    if x is None or t is bool or t is int or t is float or t is str:
        return x
    if t is Array:
        return {"h": object.__getattribute__(x, "_h")}
    if t is list or t is tuple or isinstance(x, (list, tuple)):  # (named tuples cross as tuples)
        vals = [_encode(v) for v in x]
        return vals if isinstance(x, list) else {"t": vals}
    if t is DType:
        return str.__str__(x)
    if isinstance(x, bool):
        return bool(x)
    if isinstance(x, int):
        return int.__int__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, str):
        return str.__str__(x)
    if t is complex:
        return {"c": [x.real, x.imag]}
    if t is bytes:
        return {"b": x.hex()}
    if t is slice:
        return {"s": [_encode(x.start), _encode(x.stop), _encode(x.step)]}
    if x is Ellipsis:
        return {"E": 0}
    if t is range:
        return list(x)
    if t is Function:
        h = object.__getattribute__(x, "_h")
        if h is not None:
            return {"f": h}
        raise TypeError("library functions cannot be passed to library functions")
    if isinstance(x, type):
        if x in _BUILTIN_TYPES:
            return {"y": _BUILTIN_TYPES[x]}
        raise TypeError(f"type {x.__name__} is not accepted by library functions")
    if callable(x):
        _CHANNEL.callbacks.append(x)
        return {"k": len(_CHANNEL.callbacks) - 1}
    raise TypeError(f"values of type {t.__name__} are not accepted by library functions")


_NAMED = {}


def _decode(v):
    """A value off the wire: handles become arrays (or functions), tagged values their types."""
    t = type(v)
    if t is list:
        return [_decode(x) for x in v]
    if t is not dict:
        return v
    (tag, p), = v.items()
    if tag == "h":
        return _array(p)
    if tag == "t":
        return tuple(_decode(x) for x in p)
    if tag == "n":
        cls = _NAMED.get(tuple(p[0]))
        if cls is None:
            cls = _NAMED[tuple(p[0])] = _collections.namedtuple("Result", p[0])
        return cls(*[_decode(x) for x in p[1]])
    if tag == "c":
        return complex(p[0], p[1])
    if tag == "b":
        return bytes.fromhex(p)
    if tag == "d":
        return DType(p)
    if tag == "g":  # a NumPy scalar: its value and dtype name
        cls = _SCALARS.get(p[1])
        return cls(p[0]) if cls is not None else p[0]
    if tag == "f":
        return Function(None, "vectorized", None, p)
    if tag == "s":
        return slice(*[_decode(x) for x in p])
    if tag == "E":
        return Ellipsis
    raise RuntimeError("library server: unknown value")


class DType(str):
    """A dtype as its name: compares equal to ``"int64"``, ``"float"``, ``float``..."""

    __slots__ = ()

    def __eq__(self, other):
        if isinstance(other, str) and str.__eq__(self, other):
            return True
        if isinstance(other, type) and other not in _BUILTIN_TYPES:
            return str.__eq__(self, getattr(other, "__name__", None))  # (a NumPy scalar type, in tests)
        try:
            return _request("dteq", str.__str__(self), _encode(other))
        except TypeError:
            return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__

    @property
    def kind(self):
        return _request("dtinfo", str.__str__(self), "kind")

    @property
    def itemsize(self):
        return _request("dtinfo", str.__str__(self), "itemsize")

    @property
    def name(self):
        return str.__str__(self)


_SCALARS = _scalar_types(DType)


def _array(h):
    a = Array.__new__(Array)
    object.__setattr__(a, "_h", h)
    return a


class Array:
    """The library's array type (renamed to ``ARRAY_NAME`` below): a handle to the server's array."""

    __slots__ = ("_h",)
    __hash__ = None
    __array_ufunc__ = None  # (for code that holds NumPy itself, as tests do: operators come to us)

    def __init__(self, data=None):
        h = _request("new", _encode(data))
        object.__setattr__(self, "_h", object.__getattribute__(h, "_h"))
        object.__setattr__(h, "_h", None)  # (the reply's own object must not free it)

    def __del__(self):
        try:
            h = object.__getattribute__(self, "_h")
            if h is not None:
                _CHANNEL.frees.append(h)
        except Exception:
            pass

    def __setattr__(self, name, value):
        raise AttributeError(f"'{ARRAY_NAME}' object attribute '{name}' is read-only")

    def __reduce__(self):
        raise TypeError(f"cannot pickle '{ARRAY_NAME}' object")

    # copy.copy and copy.deepcopy make a copy on the server, as they do of a NumPy array (they would
    # otherwise go through __reduce__, which refuses: an honest answer that copies an array failed
    # under strict and passed under sebench)
    def __copy__(self):
        return self._op("copy")

    def __deepcopy__(self, memo):
        return self._op("copy")

    def __dir__(self):
        return ["shape", "dtype", "size", "ndim", "T"]

    def _op(self, *args):
        return _request(args[0], object.__getattribute__(self, "_h"), *args[1:])

    shape = property(lambda self: self._op("attr", "shape"))
    dtype = property(lambda self: self._op("attr", "dtype"))
    size = property(lambda self: self._op("attr", "size"))
    ndim = property(lambda self: self._op("attr", "ndim"))
    T = property(lambda self: self._op("attr", "T"))

    def __repr__(self):
        return self._op("repr")

    def __str__(self):
        return self._op("str")

    def __len__(self):
        return self._op("len")

    def __iter__(self):
        return iter(self._op("iter"))

    def __getitem__(self, key):
        return self._op("get", _encode(key))

    def __setitem__(self, key, value):
        self._op("set", _encode(key), _encode(value))


def _binary(name, reflected=False):
    def method(self, other):
        return self._op("op", name, _encode(other), reflected)

    method.__name__ = f"__{'r' if reflected else ''}{name}__"
    return method


for _name in ("add", "sub", "mul", "truediv", "pow"):
    setattr(Array, f"__{_name}__", _binary(_name))
    setattr(Array, f"__r{_name}__", _binary(_name, reflected=True))
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Array, f"__{_name}__", _binary(_name))
Array.__name__ = Array.__qualname__ = ARRAY_NAME


def fetch(x):
    """The data of an array as nested lists of Python scalars (the harness's trusted read)."""
    return _request("list", object.__getattribute__(x, "_h"))


def flush():
    """Send the arrays made here and not sent yet (see :func:`_deferred`): the harness reads results
    from the server itself, after every case has run, so an array returned straight from ``array()``
    must be there by then."""
    if _CHANNEL.defs:
        _request("sync")


def show(x):
    """``(str(x), fetch(x))`` in one request (the harness reads both of a result)."""
    return tuple(_request("show", object.__getattribute__(x, "_h")))


class Function:
    # A library function: its name goes to the server with the arguments (``_h``: a callable the
    # server made, such as the object ``vectorize`` returns).  (No class docstring: __doc__ is the
    # function's own.)
    __slots__ = ("_name", "_qual", "_doc", "_h")
    __doc__ = property(lambda self: object.__getattribute__(self, "_doc"))

    def __init__(self, qual, name, doc=None, h=None):
        object.__setattr__(self, "_qual", qual)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_doc", doc)
        object.__setattr__(self, "_h", h)

    @property
    def __name__(self):
        return object.__getattribute__(self, "_name")

    def __call__(self, *args, **kwargs):
        a = [_encode(x) for x in args]
        kw = {str.__str__(k): _encode(v) for k, v in kwargs.items()}
        h = object.__getattribute__(self, "_h")
        if h is not None:
            return _request("fcall", h, a, kw)
        return _request("call", object.__getattribute__(self, "_qual"), a, kw)

    def __repr__(self):
        return f"<function {object.__getattribute__(self, '_name')}>"

    def __setattr__(self, name, value):
        raise AttributeError("library functions are read-only")

    def __reduce__(self):
        raise TypeError("cannot pickle a library function")


def load_docs(module_file):
    """The ``docs.json`` written beside a library module, or no docs."""
    import os

    path = os.path.join(os.path.dirname(module_file), "docs.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return _json.load(f)


def export(namespace, names, docs=None, prefix=""):
    """Fill a module namespace with library functions (``prefix``: ``"linalg_name."`` for the submodule)."""
    docs = docs or {}
    for name in names:
        namespace[name] = Function(prefix + name, name, docs.get(name))
