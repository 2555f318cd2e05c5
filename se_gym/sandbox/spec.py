"""A sandbox *spec*: one value carrying a backend and its options, parsed once and passed down.

Every place that takes a sandbox (``Judge(sandbox=...)``, ``gym.make("SEBench-v0", sandbox=...)``,
the ``--sandbox`` flag of the CLIs) takes any of these spellings and turns it into a
:class:`SandboxSpec` with :meth:`SandboxSpec.parse`:

- ``None`` or ``"local"``: a registered backend by name (``"docker"``, ``"ray"``, a name of your own);
- ``"http://host:port"`` (or ``https://``): the ``http`` backend with ``url=`` that address;
- ``"ray,address=auto,actors=2"``: a name, then ``KEY=VALUE`` options after commas (the CLIs also
  take ``--sandbox-option KEY=VALUE``, repeatable; a VALUE that parses as JSON is that value,
  ``2`` an int, ``true`` a bool, else it is the text);
- ``{"name": "ray", "address": "auto"}``: a dict, the name plus its options (a TOML table in a
  ``--config`` file);
- ``"module:Class"`` or ``"path/file.py:Class"``: a backend class of your own, not registered;
- ``SandboxSpec("ray", {"address": "auto"})``.

What a backend needs from its caller is not decided by its name but *declared* by its class (see
:class:`~se_gym.sandbox.base.Sandbox`: ``library_as``, ``channel``, ``warmup``, ``pooled_start``,
``remote``, ``cluster``, ``required_options``, ``requires``); :meth:`SandboxSpec.build` reads them.
"""
from __future__ import annotations

import inspect
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..choices import OFFICIAL_PROFILE
from ..registry import RegistryError
from .base import Sandbox, missing_requirements
from .registry import SANDBOXES

log = logging.getLogger(__name__)

# an address names the backend that speaks its scheme, given url= the address
URL_SCHEMES = {"http": "http", "https": "http"}
GRAMMAR = "NAME[,KEY=VALUE...] (a registered name, module:Class or file.py:Class), or http(s)://HOST:PORT"


class SandboxSpecError(RegistryError):
    """A sandbox spec that does not parse, names no backend, or gives it options it does not take."""


def parse_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` as ``(key, value)``; VALUE is read as JSON when it parses, else kept as text.

    Args:
        text: what was typed.

    Raises:
        SandboxSpecError: no ``=`` or an empty key.
    """
    key, sep, value = str(text).partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise SandboxSpecError(f"sandbox option {text!r}: expected KEY=VALUE")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def _parse_text(text: str) -> tuple[str, dict]:
    text = text.strip()
    if not text:
        raise SandboxSpecError(f"an empty sandbox spec: expected {GRAMMAR}")
    if "://" in text.split(",", 1)[0]:
        backend = URL_SCHEMES.get(text.split("://", 1)[0].lower())
        if backend is None:
            raise SandboxSpecError(f"sandbox {text!r}: only {', '.join(s + '://' for s in URL_SCHEMES)} addresses name a backend "
                                   f"(expected {GRAMMAR})")
        return backend, {"url": text}
    head, *rest = text.split(",")
    return head.strip(), dict(parse_option(part) for part in rest if part.strip())


@dataclass(frozen=True)
class SandboxSpec:
    """A sandbox backend and its own options, before it is built.

    Attributes:
        name: a registered backend name, an entry point of ``se_gym.sandboxes``, ``module:Class`` or
            ``file.py:Class``.
        options: the backend's own constructor options (``{"address": "auto"}`` for ``ray``).
    """

    name: str = "local"
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SandboxSpecError(f"a sandbox spec's name must be a backend name, got {self.name!r}")
        object.__setattr__(self, "options", dict(self.options or {}))

    @classmethod
    def parse(cls, value: Any = None, options: Mapping[str, Any] | Sequence[str] | None = None) -> "SandboxSpec":
        """The spec a user's value means (see the module docstring for the spellings).

        Args:
            value: None, a string, a dict with ``name``, or a SandboxSpec.
            options: more options, a mapping or ``KEY=VALUE`` strings (``--sandbox-option``); they
                win over those inside ``value``.

        Raises:
            SandboxSpecError: a value that is none of the spellings (one line).
        """
        if value is None:
            name, opts = "local", {}
        elif isinstance(value, SandboxSpec):
            name, opts = value.name, dict(value.options)
        elif isinstance(value, str):
            name, opts = _parse_text(value)
        elif isinstance(value, Mapping):
            opts = dict(value)
            name = opts.pop("name", None)
            if not isinstance(name, str):
                raise SandboxSpecError(f"a sandbox dict needs a 'name' (the backend), got {value!r}")
            nested = opts.pop("options", None)
            if isinstance(nested, Mapping):
                opts.update(nested)
        else:
            raise SandboxSpecError(f"sandbox must be one of {', '.join(SANDBOXES.names())}, a spec ({GRAMMAR}), a dict with "
                                   f"'name' or a Sandbox; got {type(value).__name__}")
        if options:
            extra = options.items() if isinstance(options, Mapping) else (parse_option(o) for o in options)
            opts.update(dict(extra))
        return cls(name, opts)

    def with_options(self, **options: Any) -> "SandboxSpec":
        """The same backend with these options added (they win).

        Args:
            options: the options.
        """
        return SandboxSpec(self.name, {**self.options, **options})

    def joining(self, address: str | None) -> "SandboxSpec":
        """This spec, its backend given ``address=`` when it is a cluster backend (``cluster = True``)
        given none: the cluster a job's own ``--ray-address`` names.

        Args:
            address: the cluster's address, or None (the spec as it is).
        """
        if address and self.load().cluster and not self.options.get("address"):
            return self.with_options(address=address)
        return self

    def __str__(self) -> str:
        return ",".join([self.name, *(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in self.options.items())])

    # -- the backend's class and its declarations ---------------------------------------------------
    def load(self) -> type:
        """The backend's class (the registry's; raises a one-line error for an unknown name)."""
        try:
            return SANDBOXES.load(self.name)
        except SandboxSpecError:
            raise
        except RegistryError as exc:
            raise SandboxSpecError(str(exc)) from None

    def check(self, *, requirements: bool = False) -> type:
        """The backend's class, once the name loads, every option is one its constructor takes and
        the options it declares required are given.

        Args:
            requirements: also check that the modules it declares (``requires``) are installed.

        Raises:
            SandboxSpecError: one line saying what is wrong and what would do.
        """
        cls = self.load()
        takes = constructor_options(cls)
        if takes is not None:
            unknown = sorted(set(self.options) - takes)
            if unknown:
                known = ", ".join(sorted(takes - {"pythonpath", "preload", "workers"})) or "none"
                raise SandboxSpecError(f"sandbox {self.name} takes no option {', '.join(unknown)} (its options: {known})")
        missing = [k for k in getattr(cls, "required_options", {}) if self.options.get(k) in (None, "")]
        if missing:
            what = "; ".join(f"{k}: {cls.required_options[k]}" for k in missing)
            raise SandboxSpecError(f"sandbox {self.name} needs {', '.join(missing)} ({what})")
        if requirements:
            why = missing_requirements(cls)
            if why:
                raise SandboxSpecError(f"sandbox {self.name} needs {why}")
        return cls

    def takes(self, option: str) -> bool:
        """Whether the backend's constructor takes ``option`` (by name, or through ``**options``).

        Args:
            option: the option's name.
        """
        takes = constructor_options(self.load())
        return takes is None or option in takes

    def build(self, *, library: Any = None, profile: str = OFFICIAL_PROFILE, preload: Sequence[str] = ("numpy",),
              warmup: Sequence[str] = (), workers: int | None = None, quick_start: bool = False) -> Sandbox:
        """Build the sandbox, giving the backend what its declarations ask for.

        Args:
            library: the library programs import (a :class:`~se_gym.library.Library`), or None: with
                ``library_as = "path"`` its folder for ``profile`` (without docstrings) goes on the
                programs' path; with ``"object"`` the backend gets ``library=`` and ``profile=``; a
                backend with ``library_as = None`` (a server's client) gets neither.
            profile: the profile the library is written for.
            preload: modules each worker imports once (not given to a remote backend).
            warmup: trusted code each worker runs once, given where the backend declares ``warmup``.
            workers: worker processes (None: the backend's default).
            quick_start: a backend whose ``pooled_start`` is ``"launch"`` is asked to return once its
                first worker is up (``ready="first"``).

        Returns:
            The sandbox (close it, or use it as a context manager).
        """
        return build_sandbox(self.check(), self.options, library=library, profile=profile, preload=preload, warmup=warmup,
                             workers=workers, quick_start=quick_start)


def build_sandbox(cls: type, options: Mapping[str, Any] | None = None, *, library: Any = None, profile: str = OFFICIAL_PROFILE,
                  preload: Sequence[str] = ("numpy",), warmup: Sequence[str] = (), workers: int | None = None,
                  quick_start: bool = False) -> Sandbox:
    """Build the Sandbox class ``cls`` with ``options``, giving it what it declares it needs (the
    arguments are :meth:`SandboxSpec.build`'s, which checks the options first).

    Args:
        cls: a :class:`~se_gym.sandbox.base.Sandbox` subclass.
        options: its own options.
        library: the library programs import, or None.
        profile: the profile the library is written for.
        preload: modules each worker imports once.
        warmup: trusted code each worker runs once.
        workers: worker processes.
        quick_start: ask a ``"launch"`` backend to return once its first worker is up.
    """
    options = dict(options or {})
    pythonpath: list[str] = []
    if library is not None and cls.library_as == "path":
        pythonpath.append(str(library.materialize(profile, docs=False)))
    elif library is not None and cls.library_as == "object":
        options.setdefault("library", library)
        options.setdefault("profile", profile)
    if cls.warmup and warmup:
        options.setdefault("warmup", list(warmup))
    if quick_start and cls.pooled_start == "launch":
        options.setdefault("ready", "first")
    if cls.remote:  # a client of a server: the programs' path and preloads are the server's
        return cls(workers=workers, **options)
    return cls(pythonpath=pythonpath, preload=list(preload), workers=workers, **options)


SANDBOX_HELP = (f"the judge's sandbox: {GRAMMAR}; e.g. local, docker, ray,address=auto, http://localhost:8111, "
                "path/file.py:MySandbox")
OPTION_HELP = "an option of the sandbox backend (repeatable; VALUE read as JSON when it parses, else text)"


@dataclass(frozen=True, kw_only=True)
class SandboxFlags:
    """The ``--sandbox SPEC`` and ``--sandbox-option KEY=VALUE`` flags every command that builds a
    sandbox shares (a base of its options dataclass; the spec is parsed once, by :attr:`sandbox_spec`).

    Attributes:
        sandbox: the spec, any spelling of :meth:`SandboxSpec.parse` (a TOML table in a ``--config`` file).
        sandbox_option: ``KEY=VALUE`` options added to the spec's.
    """

    sandbox: Any = field(default="local", metadata={"help": SANDBOX_HELP, "metavar": "SPEC", "type": str})
    sandbox_option: tuple[str, ...] = field(default=(), metadata={"help": OPTION_HELP, "metavar": "KEY=VALUE", "repeat": True})

    # a subclass that still has the old flags (http_url, ray_address) folds them in as options
    _OLD_FLAGS = {"http_url": "url", "ray_address": "address"}

    @property
    def sandbox_spec(self) -> SandboxSpec:
        """The sandbox spec these flags give (parsed, not yet checked against the backend)."""
        old = {k: getattr(self, k, None) for k in self._OLD_FLAGS}
        return sandbox_spec(self.sandbox, self.sandbox_option, where=type(self).__name__, **old)

    def check_sandbox_flags(self, error: type = SandboxSpecError) -> SandboxSpec:
        """The spec, checked (its backend loads, takes these options and has those it needs).

        Args:
            error: the exception class to raise with the one-line message (a CLI's ``CLIError``).
        """
        try:
            spec = self.sandbox_spec
            spec.check()
            for flag, key in self._OLD_FLAGS.items():
                if getattr(self, flag, None) and not spec.takes(key):
                    raise SandboxSpecError(f"--{flag.replace('_', '-')} is for a sandbox that takes {key}= (the {spec.name} "
                                           f"sandbox does not); give a backend's options as --sandbox-option KEY=VALUE")
        except RegistryError as exc:
            raise error(str(exc)) from None
        return spec


def constructor_options(cls: type) -> set[str] | None:
    """The keyword options ``cls(...)`` takes; None when it takes any (``**options``).

    Args:
        cls: a Sandbox class.
    """
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):  # (a builtin or C class: nothing to read)
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


_WARNED: set[str] = set()


def sandbox_spec(value: Any = None, options: Mapping[str, Any] | Sequence[str] | None = None, *, http_url: str | None = None,
                 ray_address: str | None = None, where: str = "") -> SandboxSpec:
    """:meth:`SandboxSpec.parse`, also taking the old spellings ``http_url=`` and ``ray_address=``
    (each says once per process that it is deprecated, and becomes an option of the spec).

    Args:
        value: the sandbox as given.
        options: more options (a mapping or ``KEY=VALUE`` strings).
        http_url: old spelling of ``sandbox="http://HOST:PORT"``.
        ray_address: old spelling of ``sandbox={"name": "ray", "address": ...}``.
        where: who was given the old spelling, for the deprecation line.

    Raises:
        SandboxSpecError: see :meth:`SandboxSpec.parse`.
    """
    spec = SandboxSpec.parse(value, options)
    old = {"url": ("http_url", http_url), "address": ("ray_address", ray_address)}
    for key, (spelling, given) in old.items():
        if not given:
            continue
        if spelling not in _WARNED:
            _WARNED.add(spelling)
            new = "sandbox='http://HOST:PORT'" if key == "url" else "sandbox={'name': 'ray', 'address': ...}"
            log.warning("%s%s= is deprecated: give the sandbox as one spec, %s (or --sandbox-option %s=...)",
                        f"{where}: " if where else "", spelling, new, key)
        if spec.takes(key):
            spec = SandboxSpec(spec.name, {key: given, **spec.options})
    return spec


def check_sandbox(spec: Any) -> Any:
    """``spec`` if it names a backend (registered, an entry point, or a ``module:Class`` that loads)
    with options its constructor takes, and those it declares required.

    Args:
        spec: the sandbox as given: any spelling of :meth:`~se_gym.sandbox.spec.SandboxSpec.parse`.

    Raises:
        RegistryError: one line (listing the registered names, or the backend's options).
    """
    SandboxSpec.parse(spec).check()
    return spec


def make_sandbox(
    backend: Any = "local",
    *,
    pythonpath: Sequence[str] = (),
    preload: Sequence[str] = ("numpy",),
    workers: int | None = None,
    **options: Any,
) -> Sandbox:
    """Build a sandbox.

    Args:
        backend: a registered name (``local``: forked workers, bwrap when it works; ``docker``: the
            same workers in containers; ``http``: SE-Bench's sandbox protocol, pass ``url=``;
            ``ray``: the local workers on every CPU node of a Ray cluster, pass ``address=``), an
            entry point of ``se_gym.sandboxes``, ``module:Class`` / ``file.py:Class``, or any spec
            :meth:`~se_gym.sandbox.spec.SandboxSpec.parse` reads (``"http://HOST:PORT"``, a dict).
        pythonpath: folders programs can import from.
        preload: modules each worker imports once.
        workers: worker processes (None: the backend's default).
        options: the backend's own options.

    Returns:
        The sandbox (close it, or use it as a context manager).
    """
    spec = SandboxSpec.parse(backend, options)
    cls = spec.load()
    if cls.remote:  # a client of a server: the programs' path and preloads are the server's
        return cls(workers=workers, **spec.options)
    return cls(pythonpath=[str(p) for p in pythonpath], preload=list(preload), workers=workers, **spec.options)


__all__ = ["GRAMMAR", "SandboxFlags", "SandboxSpec", "SandboxSpecError", "build_sandbox", "check_sandbox", "constructor_options", "make_sandbox", "parse_option",
           "sandbox_spec"]
