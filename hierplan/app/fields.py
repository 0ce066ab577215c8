"""RunOptions as each entry point takes them: command-line flags, the web page's form, a LangGraph Server run's
``configurable`` or ``context``. All of it is derived from RunOptions' fields (the type from the annotation,
choices from a Literal, a negative flag from ``metadata["flag"]``, help, metavar and minimum from the metadata),
so an option is declared once, in hierplan.options. Bad values raise OptionError: one line naming the option as
the user wrote it. Imports nothing heavy.
"""

from __future__ import annotations

import argparse
import types
import typing
from dataclasses import Field, fields
from functools import cache
from typing import Any, Callable, Literal, Mapping
from urllib.parse import urlsplit

from hierplan.errors import UsageError
from hierplan.options import RunOptions

Label = Callable[[Field], str]


class OptionError(UsageError, ValueError):
    """A bad option value. Also a ValueError: LangGraph Server shows a ValueError's message to the client and
    hides other exceptions' messages behind "An internal error occurred"."""


@cache
def _hints() -> dict[str, Any]:
    return typing.get_type_hints(RunOptions)


def value_type(f: Field) -> tuple[type, tuple[Any, ...] | None]:
    """(the value's type, its choices or None): ``X | None`` is X; a Literal's values are its choices."""
    hint = _hints()[f.name]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is Literal:
        choices = typing.get_args(hint)
        return type(choices[0]), choices
    return hint, None


def flag(f: Field) -> str:
    """--max-replans; a boolean that defaults to True has a negative flag of its own (--no-constrain)."""
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


def key(f: Field) -> str:
    """The flag as a name (no_constrain, max_replans): argparse's dest and the web form's field name."""
    return flag(f).lstrip("-").replace("-", "_")


def words(f: Field) -> str:
    """The option in words, for the web page's messages (max replans)."""
    return f.name.replace("_", " ")


def named(f: Field) -> str:
    """The option as a server's client names it (a configurable or context key)."""
    return f"option {f.name}"


# --- the command line ---------------------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser, *, skip: tuple[str, ...] = ()) -> None:
    """One flag per RunOptions field but those in ``skip``, in declaration order; left off, a flag is None
    (False for a boolean's), so that only the options given override a run's or a server's."""
    group = parser.add_argument_group("model and run options")
    for f in fields(RunOptions):
        if f.name in skip:
            continue
        kind, choices = value_type(f)
        if kind is bool:
            group.add_argument(flag(f), dest=key(f), action="store_true", help=f.metadata["help"])
        else:
            group.add_argument(flag(f), dest=key(f), type=kind, choices=choices, metavar=f.metadata.get("metavar"),
                               help=f.metadata["help"])


def from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The options given on the command line, by field name, checked (those left off are absent)."""
    given: dict[str, Any] = {}
    for f in fields(RunOptions):
        value = getattr(args, key(f), None)
        if value is None or value is False:
            continue
        given[f.name] = (not f.default) if value_type(f)[0] is bool else value  # a flag given says "not the default"
    return check(given, flag)


# --- the web page's form ------------------------------------------------------------------------------------

def from_form(form: Mapping[str, str]) -> dict[str, Any]:
    """The run options of the page's form, by field name, checked. The model's options are not the form's
    (the page's runs share the model its server loaded); a checkbox is always given, on or off."""
    given: dict[str, Any] = {}
    for f in fields(RunOptions):
        if f.metadata.get("load") or f.metadata.get("host"):
            continue
        kind, _ = value_type(f)
        if kind is bool:  # a ticked box is the flag given
            given[f.name] = (not f.default) if form.get(key(f)) == "on" else f.default
            continue
        raw = str(form.get(key(f)) or "").strip()
        if raw:
            given[f.name] = _parse(f, kind, raw)
    return check(given, words)


def _parse(f: Field, kind: type, raw: str) -> Any:
    try:
        return kind(raw)
    except ValueError:
        raise OptionError(f"{words(f)} must be {_expected(f)}, got {raw!r}") from None


# --- a server's configurable / context ----------------------------------------------------------------------

def from_mapping(values: Mapping[str, Any], label: Label = named, *, host: bool = False) -> dict[str, Any]:
    """The options among ``values`` (a server's configurable or context), by field name,
    checked; other keys are ignored, None is "not given". An option may be set by its flag's name too
    (``sequential: true`` for ``parallel: false``). The host's options (``mcp``) are read only with ``host``
    (the server's own defaults), never from a client."""
    given: dict[str, Any] = {}
    for f in fields(RunOptions):
        if f.metadata.get("host") and not host:
            continue
        if values.get(f.name) is not None:
            given[f.name] = values[f.name]
        elif key(f) != f.name and values.get(key(f)) is not None:
            flagged = values[key(f)]  # a negative flag's name: true means "not the default"
            given[f.name] = (not f.default if flagged else f.default) if isinstance(flagged, bool) else flagged
    return check(given, label)


# --- checks -------------------------------------------------------------------------------------------------

def check(values: Mapping[str, Any], label: Label) -> dict[str, Any]:
    """``values`` by field name, each checked against its field: type, choices, minimum, and a base URL that
    may be stored with a run. Returns them as given."""
    by_name = {f.name: f for f in fields(RunOptions)}
    for name, value in values.items():
        f = by_name[name]
        if not _fits(f, value):
            raise OptionError(f"{label(f)} must be {_expected(f)}, got {value!r}")
        low = f.metadata.get("min")
        if low is not None and value < low:
            raise OptionError(f"{label(f)} must be {low} or more, got {value}")
    if values.get("base_url") is not None:
        check_base_url(values["base_url"], label(by_name["base_url"]))
    return dict(values)


def _fits(f: Field, value: Any) -> bool:
    kind, choices = value_type(f)
    if choices is not None:
        return value in choices
    if kind is bool or isinstance(value, bool):  # bool is an int in Python: True is no number here
        return kind is bool and isinstance(value, bool)
    return isinstance(value, (int, float) if kind is float else kind)


def _expected(f: Field) -> str:
    kind, choices = value_type(f)
    if choices is not None:
        return "one of " + ", ".join(map(str, choices))
    return {bool: "true or false", int: "a whole number", float: "a number"}.get(kind, "text")


def check_base_url(url: str, label: str = "--base-url") -> str:
    """An http(s) URL without a password in it: the URL is stored with the run, a key must not be."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OptionError(f"{label} must be an http:// or https:// URL, e.g. http://127.0.0.1:8000/v1")
    if parts.password is not None:
        raise OptionError(f"{label} must not hold a password (it is stored with the run); "
                          "put the key in OPENAI_API_KEY")
    return url
