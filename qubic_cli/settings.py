"""Where a long-running command's options come from: flags, the environment, a TOML file.

``qubic serve`` and ``qubic worker`` take each option from a flag, else ``QUBIC_*`` (or a
secret from the file named by ``QUBIC_*_FILE``), else the configuration file (the command's
table over the top level, a secret as ``<key>_file``), else its default, so no secret needs to
be on the command line. docs/operations.md, "Configuration", has every option."""

from __future__ import annotations

import argparse
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

CONFIG_ENV = "QUBIC_CONFIG"


class SettingsError(ValueError):
    """A configuration that cannot be used: a bad value, an unknown key, an unreadable file."""


@dataclass(frozen=True)
class Setting:
    """One option: its argparse ``dest``, its key in the file and its environment variable."""

    dest: str
    key: str
    env: str
    secret: bool = False  # masked when shown; may come from a file (``_FILE``, ``<key>_file``)
    location: bool = False  # a URL or a file's path: shown with only a URL's password masked
    many: bool = False  # a list: a TOML array, or comma-separated in the environment
    former: str = ""  # the name it had, still read (``QUBIC_<FORMER>``, file key ``former``)

    @property
    def envs(self) -> tuple[str, ...]:
        """Its environment variable, then the one of its former name."""
        return (self.env, f"QUBIC_{self.former.upper()}") if self.former else (self.env,)

    @property
    def keys(self) -> tuple[str, ...]:
        """Its file key, then its former one."""
        return (self.key, self.former) if self.former else (self.key,)


def named_alike(*keys: str, former: Mapping[str, str] | None = None) -> tuple[Setting, ...]:
    """Options whose ``dest`` and file key are the same name, from ``QUBIC_<NAME>``; ``former``
    maps a key to the name it had (its old flag, variable and key still work)."""
    return tuple(Setting(key, key, f"QUBIC_{key.upper()}", former=(former or {}).get(key, ""))
                 for key in keys)


@dataclass(frozen=True)
class Value:
    """An option's effective value and where it came from: flag, env, file or default."""

    value: Any
    source: str


def load_file(path: str | os.PathLike[str], command: str) -> dict[str, Any]:
    """The file's keys for ``command``: its top level, overridden by its ``[command]`` table."""
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as error:
        raise SettingsError(f"cannot read the configuration {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"the configuration {path} is not valid TOML: {error}") from None
    tables = {key: value for key, value in data.items() if isinstance(value, dict)}
    unknown_tables = sorted(set(tables) - {"serve", "worker"})
    if unknown_tables:
        raise SettingsError(f"the configuration {path} has unknown tables: "
                            + ", ".join(f"[{t}]" for t in unknown_tables))
    top = {key: value for key, value in data.items() if key not in tables}
    return top | tables.get(command, {})


def _secret_from(path: str, where: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError as error:
        raise SettingsError(f"{where}: cannot read {path}: {error.strerror}") from None


TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def _convert(action: argparse.Action, raw: Any, where: str) -> Any:
    """``raw`` (a string from the environment, or a TOML value) as the flag would give it."""
    if action.nargs == 0:  # a switch such as --access-log
        if isinstance(raw, bool):
            return raw
        if str(raw).lower() in TRUE + FALSE:
            return str(raw).lower() in TRUE
        raise SettingsError(f"{where}: {raw!r} is not true or false")
    if isinstance(raw, bool | dict | list):
        raise SettingsError(f"{where}: {raw!r} is not a single value")
    text = str(raw)
    convert = action.type if callable(action.type) else str
    try:
        value = convert(text)
    except argparse.ArgumentTypeError as error:
        raise SettingsError(f"{where}: {error}") from None
    except (TypeError, ValueError):
        kind = getattr(convert, "__name__", "value")
        raise SettingsError(f"{where}: {text!r} is not a valid {kind}") from None
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise SettingsError(f"{where}: {value!r} is not one of {choices}")
    return value


def resolve(
    parser: argparse.ArgumentParser, settings: Sequence[Setting], args: argparse.Namespace,
    explicit: set[str], environ: Mapping[str, str], file: Mapping[str, Any],
    file_name: str = "the configuration", *, others: bool = False,
) -> dict[str, Value]:
    """Every setting's effective value: the flag if ``explicit`` holds its dest, else the
    environment, else the file, else the parser's default (already in ``args``)."""
    actions = {action.dest: action for action in parser._actions}
    known = {key for s in settings for key in s.keys} | {
        f"{s.key}_file" for s in settings if s.secret}
    unknown = sorted(set(file) - known - {"config"})
    if unknown and not others:  # ``others``: the file is another command's, read in part
        raise SettingsError(f"{file_name} has unknown keys: {', '.join(unknown)}")
    values: dict[str, Value] = {}
    for setting in settings:
        action = actions[setting.dest]
        env = next((name for name in setting.envs if name in environ), setting.env)
        key = next((name for name in setting.keys if name in file), setting.key)
        if setting.dest in explicit:
            values[setting.dest] = Value(getattr(args, setting.dest), "flag")
        elif env in environ or (setting.secret and f"{setting.env}_FILE" in environ):
            raw: Any
            if env in environ:
                raw, where = environ[env], env
            else:
                where = f"{setting.env}_FILE"
                raw = _secret_from(environ[where], where)
            if setting.many:
                value = [_convert(action, part.strip(), where)
                         for part in raw.split(",") if part.strip()]
            else:
                value = _convert(action, raw, where)
            values[setting.dest] = Value(value, "env")
        elif key in file or (setting.secret and f"{setting.key}_file" in file):
            where = f"{file_name}: {key}"
            raw = file.get(key)
            if raw is None:
                raw = _secret_from(str(file[f"{setting.key}_file"]), f"{where}_file")
            if setting.many:
                if not isinstance(raw, list):
                    raise SettingsError(f"{where}: expected a list")
                value = [_convert(action, item, where) for item in raw]
            else:
                value = _convert(action, raw, where)
            values[setting.dest] = Value(value, "file")
        else:
            values[setting.dest] = Value(getattr(args, setting.dest), "default")
    return values


_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@]*:)(?P<secret>[^@]*)(?=@)",
                           re.IGNORECASE)


def mask(value: Any, secret: bool, location: bool = False) -> Any:
    """A value fit to show: a URL's password replaced by ``***``, and a secret that is no URL
    shown as ``***`` whole, unless it is a ``location`` (a database's URL or file: the
    file's path is no secret, and the host needs to see which database is in use)."""
    if not secret or value is None:
        return value
    text = str(value)
    masked = _URL_PASSWORD.sub(r"\g<head>***", text)
    return masked if "://" in text or location else "***"


def explicit_dests(parser: argparse.ArgumentParser, argv: Sequence[str]) -> set[str]:
    """The dests that ``argv`` sets with a flag (parsed again with every default suppressed)."""
    quiet = argparse.ArgumentParser(add_help=False)
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            kwargs: dict[str, Any] = {"dest": action.dest, "default": argparse.SUPPRESS}
            if isinstance(action, argparse._AppendAction):
                kwargs["action"] = "append"
            elif action.nargs == 0:
                kwargs["action"] = "store_const"
                kwargs["const"] = action.const
            quiet.add_argument(*action.option_strings, **kwargs)
    found, _ = quiet.parse_known_args(list(argv))
    return set(vars(found))


def apply(parser: argparse.ArgumentParser, settings: Sequence[Setting], command: str,
          args: argparse.Namespace, argv: Sequence[str],
          environ: Mapping[str, str] | None = None, *, others: bool = False,
          ) -> dict[str, Value]:
    """Layer flags, environment, file and defaults into ``args`` (in place); returns each
    setting's value with its source. The file is ``args.config`` or ``$QUBIC_CONFIG``."""
    environ = os.environ if environ is None else environ
    path = getattr(args, "config", None) or environ.get(CONFIG_ENV)
    file = load_file(path, command) if path else {}
    values = resolve(parser, settings, args, explicit_dests(parser, argv), environ, file,
                     f"the configuration {path}" if path else "the configuration",
                     others=others)
    for dest, value in values.items():
        setattr(args, dest, value.value)
    return values


def settle(args: argparse.Namespace, settings: Sequence[Setting], command: str,
           check: Callable[[argparse.Namespace], T]) -> T:
    """What a long-running command does first: layer its options (``apply``), check them
    (``check`` returns what the command runs with, or raises ``SettingsError``), and send its
    log lines where and as they say (``--log-level``, ``--log-format``)."""
    from server.http.logs import configure_logging

    apply(args.parser, settings, command, args, args.argv)
    config = check(args)
    configure_logging(args.log_level, args.log_format)
    return config
