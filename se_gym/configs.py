"""Command-line options built from configuration dataclasses: one source for each option's name,
default and help.

A field becomes ``--field-name``; its help is ``field(metadata={"help": ...})`` (required: a flag
without help is a defect the tests catch), optional ``metadata["choices"]``, ``["flag"]`` (another
spelling), ``["short"]`` (``"-n"``), ``["metavar"]``, ``["repeat"]`` (a sequence given as a repeated
flag, ``--k 1 --k 5``, rather than as values after one flag) and ``["type"]`` (a parser for the
flag's text, such as :func:`int_or_none`).  Types come from the annotation: ``int``, ``float``, ``str``,
``bool`` (``--x/--no-x``), ``tuple[...]``/``list[...]`` (``nargs="+"``) and ``X | None``.  Values are
taken in this order: the dataclass default, then ``--config FILE`` (TOML or JSON, keys as field
names), then the flags given on the command line.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import typing
from pathlib import Path
from typing import Any

from .errors import CLIError

_UNSET = argparse.SUPPRESS  # flags not given leave no attribute: the file and the defaults fill in


def _base_type(tp: Any) -> tuple[Any, bool]:
    """(element type, is a sequence) of an annotation, ``X | None`` unwrapped."""
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    origin = typing.get_origin(tp)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)) and len(args) == 1:
        return _base_type(args[0])
    if origin in (tuple, list):
        return (args[0] if args else str), True
    return tp, False


def add_config_arguments(parser: argparse.ArgumentParser, cls: type, *, exclude: tuple[str, ...] = (),
                         config_flag: bool = True) -> None:
    """Add one flag per field of the dataclass ``cls`` (and ``--config`` unless ``config_flag`` is False).

    Args:
        parser: the parser (or argument group) to add to.
        cls: a dataclass whose fields carry ``metadata["help"]``.
        exclude: fields not offered on the command line.
        config_flag: add ``--config FILE``.
    """
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in exclude or not f.init:
            continue
        meta = f.metadata
        if "help" not in meta:
            raise TypeError(f"{cls.__name__}.{f.name} has no metadata['help']")
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        flags = [meta.get("flag", "--" + f.name.replace("_", "-"))] + ([meta["short"]] if "short" in meta else [])
        tp, many = _base_type(hints[f.name])
        # (a required field may come from --config too, so argparse does not insist: config_from_args does)
        kw: dict[str, Any] = {"dest": f.name, "default": _UNSET,
                              "help": f"{meta['help']} ({'required' if required else f'default: {default!r}'})"}
        if "choices" in meta:
            kw["choices"] = meta["choices"]
        if "metavar" in meta:
            kw["metavar"] = meta["metavar"]
        if tp is bool:
            kw["action"] = argparse.BooleanOptionalAction
        else:
            kw["type"] = meta.get("type") or (tp if tp in (int, float, str) else str)
            if many and meta.get("repeat"):  # --k 1 --k 5
                kw["action"] = "append"
            elif many:
                kw["nargs"] = "+"
        action = parser.add_argument(*flags, **kw)
        action.declared_in = declared_in(cls, f.name)  # (the house test: a shared option is declared once)
    if config_flag:
        parser.add_argument("--config", default=None, metavar="FILE", help="read options from a TOML or JSON file (flags given on the command line win)")


def declared_in(cls: type, name: str) -> type:
    """The dataclass among ``cls`` and its bases that declares the field ``name`` (a subclass that
    declares it again is the one returned).

    Args:
        cls: a dataclass.
        name: one of its fields.

    Returns:
        The class whose own body declares the field.
    """
    field_object = cls.__dataclass_fields__[name]
    for base in reversed(cls.__mro__):
        if getattr(base, "__dataclass_fields__", {}).get(name) is field_object:
            return base
    return cls


def load_config_file(path: str | Path) -> dict:
    """The options in a TOML (``.toml``) or JSON file, as a dict.

    Args:
        path: the file.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot read config {path}: {exc.strerror}") from None
    try:
        if path.suffix == ".toml":
            import tomllib

            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except ValueError as exc:
        raise CLIError(f"config {path} is not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}") from None
    if not isinstance(data, dict):
        raise CLIError(f"config {path} must hold a table of options, not {type(data).__name__}")
    return data


def config_from_args(cls: type, args: argparse.Namespace, *, also: tuple[type, ...] = (), **fixed: Any) -> Any:
    """The ``cls`` instance the command line asks for: defaults < ``--config`` file < flags < ``fixed``.

    Args:
        cls: the dataclass to build.
        args: the parsed command line.
        also: other dataclasses of the same command, whose options the file may hold too.
        fixed: values that override everything.

    Raises:
        CLIError: the file names an option ``cls`` does not have, or a value is of the wrong type.
    """
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    values: dict[str, Any] = {}
    if getattr(args, "config", None):
        data = load_config_file(args.config)
        others = {f.name for other in also for f in dataclasses.fields(other)}
        unknown = sorted(set(data) - names - others)
        if unknown:
            raise CLIError(f"config {args.config}: unknown option(s) {', '.join(unknown)} for {cls.__name__}")
        values.update({k: v for k, v in data.items() if k in names})
    values.update({n: getattr(args, n) for n in names if hasattr(args, n)})
    values.update(fixed)
    missing = [f for f in dataclasses.fields(cls) if f.init and f.name not in values
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        flag = missing[0].metadata.get("flag", "--" + missing[0].name.replace("_", "-"))
        raise CLIError(f"{flag} is required (on the command line or in --config)")
    hints = typing.get_type_hints(cls)
    for name, value in list(values.items()):
        if isinstance(value, list) and _is_tuple(hints.get(name)):  # (argparse and JSON give lists)
            values[name] = tuple(value)
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise CLIError(str(exc)) from None


def int_or_none(text: str) -> int | None:
    """A flag's integer, or None for ``none`` (``field(metadata={"type": int_or_none})``).

    Args:
        text: the flag's text.
    """
    if text.strip().lower() == "none":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or none, got {text!r}") from None


_WARNED: set[str] = set()


class _Deprecated(argparse.Action):
    """An old spelling of a flag: stores into the new one's ``dest`` and warns once per process."""

    def __init__(self, option_strings, dest, new: str = "", **kw):
        self.new = new
        super().__init__(option_strings, dest, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string not in _WARNED:
            _WARNED.add(option_string)
            logging.getLogger(__name__).warning("%s is deprecated here: use %s (it means the same)", option_string, self.new)
        setattr(namespace, self.dest, values)


def add_deprecated_alias(parser: argparse.ArgumentParser, old: str, new: str, dest: str, type: Any = None) -> None:
    """Accept ``old`` as a spelling of ``new`` (same ``dest``), warning once that it is deprecated.

    Args:
        parser: the parser that has ``new``.
        old: the old flag, e.g. ``"--backend"``.
        new: the flag to use instead, e.g. ``"--sandbox"``.
        dest: ``new``'s destination (the config field).
        type: the parser of the flag's text (None: the text).
    """
    parser.add_argument(old, dest=dest, action=_Deprecated, new=new, default=_UNSET, metavar=dest.upper(), type=type,
                        help=f"deprecated spelling of {new}")


def _is_tuple(tp: Any) -> bool:
    return any(typing.get_origin(a) is tuple for a in (tp, *typing.get_args(tp)))


__all__ = ["add_config_arguments", "add_deprecated_alias", "config_from_args", "declared_in", "int_or_none", "load_config_file"]
