"""``qubic config check``: validate a configuration and print the effective one."""

from __future__ import annotations

import argparse
import json
import sys

from qubic_cli.common import fail
from qubic_cli.settings import SettingsError, apply, mask

NAME = "config"
HELP = "check a configuration (flags, QUBIC_* environment, TOML file) and print it"
DESCRIPTION = """\
Check the configuration a command would run with, without running it: its flags, the QUBIC_*
environment variables and the TOML file (--config or $QUBIC_CONFIG), layered as the command
layers them (flags > environment > file > defaults). Prints every option with its value and
where it came from; passwords in URLs and the metrics token are masked, a SQLite file's path is
shown. Exits 2 with the reason if the configuration cannot be used.

examples:
  qubic config check serve --config /etc/qubic/qubic.toml
  qubic config check worker --config /etc/qubic/qubic.toml
  QUBIC_DATABASE_URL_FILE=/run/secrets/db qubic config check serve
"""

COMMANDS = ("serve", "worker")


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="action", required=True)
    check = actions.add_parser("check", help="validate and print the effective configuration",
                               description=DESCRIPTION,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("target", choices=COMMANDS, help="the command whose configuration")
    check.add_argument("options", nargs=argparse.REMAINDER,
                       help="the command's flags, as you would give them")
    check.add_argument("--json", action="store_true", help="print it as JSON")


def run(args: argparse.Namespace) -> int:
    import importlib

    from qubic_cli.main import build_parser

    module = importlib.import_module(f"qubic_cli.{args.target}")
    if "--json" in args.options:  # given after the target's name, as it reads naturally
        args.options.remove("--json")
        args.json = True
    argv = [args.target, *args.options]
    try:
        target = build_parser(only=args.target).parse_args(argv)
    except SystemExit as exit_info:  # argparse said what is wrong on stderr
        return int(exit_info.code or 2)
    try:
        values = apply(target.parser, module.SETTINGS, args.target, target, argv)
        made = module.server_config(target)
    except SettingsError as error:
        return fail(f"{NAME} check", str(error))
    for dest, value in values.items():  # a default the command fills in (--computer-nice's 10)
        if value.value is None and value.source == "default":
            filled = made.get(dest) if isinstance(made, dict) else getattr(made, dest, None)
            if filled is not None:
                values[dest] = type(value)(filled, "default")
    settings = {s.dest: s for s in module.SETTINGS}
    shown = {settings[dest].key: {"value": mask(v.value, settings[dest].secret,
                                                settings[dest].location), "source": v.source}
             for dest, v in values.items()}
    if args.json:
        json.dump(shown, sys.stdout, indent=2)
        print()
    else:
        width = max(map(len, shown))
        for key, entry in shown.items():
            print(f"{key:<{width}} = {json.dumps(entry['value'])}  # {entry['source']}")
        print(f"qubic {args.target}: the configuration is valid", file=sys.stderr)
    return 0
