"""Options from flags, QUBIC_* environment variables and a TOML file: precedence, secrets from
files, masking, and clear refusals (qubic_cli/settings.py, ``qubic config check``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from qubic_cli import serve
from qubic_cli.main import build_parser
from qubic_cli.settings import SettingsError, apply, mask

ROOT = Path(__file__).resolve().parents[2]


def layered(argv: list[str], environ: dict[str, str]) -> tuple[object, dict[str, str]]:
    args = build_parser().parse_args(argv)
    values = apply(args.parser, serve.SETTINGS, "serve", args, argv, environ)
    return args, {dest: value.source for dest, value in values.items()}


def test_flags_win_over_the_environment_which_wins_over_the_file(tmp_path: Path) -> None:
    config = tmp_path / "q.toml"
    config.write_text('port = 9000\ngrace = 10\nnode = "top"\n'
                      '[serve]\nnode = "mine"\nabandon_after = 30\n[worker]\nnode = "theirs"\n')
    args, sources = layered(["serve", "--config", str(config), "--port", "7000"],
                            {"QUBIC_PORT": "8000", "QUBIC_GRACE": "20"})
    assert (args.port, sources["port"]) == (7000, "flag")  # type: ignore[attr-defined]
    assert (args.grace, sources["grace"]) == (20.0, "env")  # type: ignore[attr-defined]
    assert (args.node, sources["node"]) == ("mine", "file")  # type: ignore[attr-defined]
    assert args.abandon_after == 30.0  # type: ignore[attr-defined]
    assert (args.lease_ttl, sources["lease_ttl"]) == (3.0, "default")  # type: ignore[attr-defined]


def test_the_file_can_come_from_the_environment_and_lists_from_either(tmp_path: Path) -> None:
    config = tmp_path / "q.toml"
    config.write_text('trusted_proxies = ["10.0.0.0/8", "::1"]\n')
    args, _ = layered(["serve"], {"QUBIC_CONFIG": str(config)})
    assert args.trusted_proxy == ["10.0.0.0/8", "::1"]  # type: ignore[attr-defined]
    args, _ = layered(["serve"], {"QUBIC_CONFIG": str(config),
                                  "QUBIC_TRUSTED_PROXIES": "192.168.0.0/16, 127.0.0.1"})
    assert args.trusted_proxy == ["192.168.0.0/16", "127.0.0.1"]  # type: ignore[attr-defined]


def test_secrets_come_from_files(tmp_path: Path) -> None:
    secret = tmp_path / "db-url"
    secret.write_text("postgresql://qubic:hunter2@db/qubic\n")
    args, sources = layered(["serve"], {"QUBIC_DATABASE_URL_FILE": str(secret)})
    assert args.db == "postgresql://qubic:hunter2@db/qubic"  # type: ignore[attr-defined]
    assert sources["db"] == "env"
    config = tmp_path / "q.toml"
    config.write_text(f'redis_file = "{secret}"\n')
    args, sources = layered(["serve", "--config", str(config)], {})
    assert args.redis == "postgresql://qubic:hunter2@db/qubic"  # type: ignore[attr-defined]
    with pytest.raises(SettingsError, match="QUBIC_DATABASE_URL_FILE: cannot read"):
        layered(["serve"], {"QUBIC_DATABASE_URL_FILE": str(tmp_path / "missing")})


@pytest.mark.parametrize(("environ", "file", "message"), [
    ({"QUBIC_PORT": "http"}, "", "QUBIC_PORT: 'http' is not a port number"),
    ({"QUBIC_PORT": "70000"}, "", "QUBIC_PORT: 70000 is not a port"),
    ({"QUBIC_LOG_LEVEL": "loud"}, "", "QUBIC_LOG_LEVEL: 'loud' is not one of"),
    ({}, "prot = 1\n", "unknown keys: prot"),
    ({}, "[sever]\nport = 1\n", "unknown tables: [sever]"),
    ({}, "port = [1]\n", "port: [1] is not a single value"),
    ({}, "trusted_proxies = '10.0.0.0/8'\n", "trusted_proxies: expected a list"),
    ({}, "port = \n", "is not valid TOML"),
])
def test_a_bad_configuration_is_refused_with_its_place(
        tmp_path: Path, environ: dict[str, str], file: str, message: str) -> None:
    config = tmp_path / "q.toml"
    config.write_text(file)
    with pytest.raises(SettingsError, match=message.replace("[", r"\[")):
        layered(["serve", "--config", str(config)], environ)


def test_masking_hides_passwords_and_keeps_the_rest() -> None:
    assert mask("postgresql://qubic:hunter2@db:5432/qubic", True) == \
        "postgresql://qubic:***@db:5432/qubic"
    assert mask("redis://:hunter2@cache:6379/0", True) == "redis://:***@cache:6379/0"
    assert mask("redis://cache:6379/0", True) == "redis://cache:6379/0"
    assert mask("hunter2", True) == "***"
    assert mask("qubic.db", False) == "qubic.db"
    assert mask("/var/lib/qubic/qubic.db", True, location=True) == "/var/lib/qubic/qubic.db"
    assert mask("postgresql://q:pw@db/q", True, location=True) == "postgresql://q:***@db/q"


def qubic(*argv: str, environ: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUBIC_")} | (environ or {})
    return subprocess.run([sys.executable, "-m", "qubic_cli", *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_config_check_prints_the_effective_configuration_masked(tmp_path: Path) -> None:
    config = tmp_path / "q.toml"
    config.write_text('database = "postgresql://qubic:hunter2@db/qubic"\n[serve]\nport = 9000\n')
    done = qubic("config", "check", "serve", "--config", str(config), "--grace", "30", "--json",
                 environ={"QUBIC_REDIS_URL": "redis://:sesame@cache:6379/0"})
    assert done.returncode == 0, done.stderr
    assert "hunter2" not in done.stdout + done.stderr and "sesame" not in done.stdout
    shown = json.loads(done.stdout)
    assert shown["database"] == {"value": "postgresql://qubic:***@db/qubic", "source": "file"}
    assert shown["redis"] == {"value": "redis://:***@cache:6379/0", "source": "env"}
    assert shown["port"]["source"] == "file" and shown["grace"] == {"value": 30.0,
                                                                    "source": "flag"}
    token = qubic("config", "check", "serve", "--db", str(tmp_path / "q.db"), "--json",
                  environ={"QUBIC_METRICS_TOKEN": "t0ken"})
    shown = json.loads(token.stdout)  # which database is in use: its path is no secret
    assert shown["database"] == {"value": str(tmp_path / "q.db"), "source": "flag"}
    assert shown["metrics_token"] == {"value": "***", "source": "env"}
    refused = qubic("config", "check", "serve", environ={"QUBIC_AI_NICE": "40"})
    assert refused.returncode == 2 and "--computer-nice must be 0-19" in refused.stderr


def test_serve_takes_its_database_from_the_environment(tmp_path: Path) -> None:
    """The URL reaches the server from QUBIC_DATABASE_URL_FILE, never from argv: a corrupt
    file named there is refused by name as if given with --db."""
    db = tmp_path / "q.db"
    db.write_bytes(b"not a database at all" * 100)
    secret = tmp_path / "db"
    secret.write_text(str(db))
    done = qubic("serve", "--port", "0", environ={"QUBIC_DATABASE_URL_FILE": str(secret)})
    assert done.returncode == 2
    assert "not a SQLite database, or it is corrupt" in done.stderr


def test_json_logs_and_the_access_log(tmp_path: Path) -> None:
    """``--log-format json --access-log``: every line on stderr is one JSON object, and a
    request is logged with its client's address, path and status."""
    import re
    import urllib.request

    env = {k: v for k, v in os.environ.items() if not k.startswith("QUBIC_")}
    env |= {"QUBIC_LOG_FORMAT": "json", "QUBIC_ACCESS_LOG": "true", "QUBIC_AI_WORKERS": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "qubic_cli", "serve", "--port", "0", "--db",
         str(tmp_path / "q.db")], cwd=ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"(http://\S+?)\s", line)
        assert url, line
        with urllib.request.urlopen(url.group(1) + "/health", timeout=30) as response:
            assert response.status == 200
    finally:
        server.terminate()
        _, err = server.communicate(timeout=60)
    lines = [json.loads(text) for text in err.splitlines() if text.strip()]
    assert lines and all({"time", "level", "logger", "message"} <= set(entry) for entry in lines)
    access = [entry for entry in lines if entry["logger"] == "qubic.access"]
    assert any(entry["path"] == "/health" and entry["status"] == 200
               and entry["address"] == "127.0.0.1" for entry in access), access
    said = [entry["message"] for entry in lines]  # the start-up log names the database
    assert f"database: SQLite {tmp_path / 'q.db'}" in said, said


def test_the_community_options_from_every_source(tmp_path: Path) -> None:
    """Reserved names, spectators' chat and the leaderboard's inactivity (issue 27) layer as
    every option does, reach the server's configuration, and a bad one is refused."""
    config = tmp_path / "q.toml"
    config.write_text('reserved_names = ["boss", "chief"]\nspectator_chat = false\n')
    args, sources = layered(["serve", "--config", str(config), "--leaderboard-inactive-days",
                             "30"], {"QUBIC_SPECTATOR_CHAT": "true"})
    made = serve.server_config(args)
    assert (made.reserved_names, made.spectator_chat, made.leaderboard_inactive_days) == (
        ("boss", "chief"), True, 30.0)
    assert (sources["reserved_name"], sources["spectator_chat"],
            sources["leaderboard_inactive_days"]) == ("file", "env", "flag")
    args, _ = layered(["serve", "--no-spectator-chat"], {"QUBIC_RESERVED_NAMES": "a,b"})
    made = serve.server_config(args)
    assert (made.reserved_names, made.spectator_chat) == (("a", "b"), False)
    done = qubic("config", "check", "serve", "--json",
                 environ={"QUBIC_LEADERBOARD_INACTIVE_DAYS": "7"})
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["leaderboard_inactive_days"] == {"value": 7.0, "source": "env"}
    assert shown["spectator_chat"] == {"value": True, "source": "default"}
    assert shown["reserved_names"] == {"value": [], "source": "default"}
    refused = qubic("config", "check", "serve", "--leaderboard-inactive-days", "-1")
    assert refused.returncode == 2 and "--leaderboard-inactive-days must be 0" in refused.stderr


def test_the_flood_limits_from_every_source(tmp_path: Path) -> None:
    """The rates of the puzzles' routes and of a player's games, and the reports a player may
    make, layer as every option does and reach the server's configuration."""
    config = tmp_path / "q.toml"
    config.write_text("puzzles_rate = 3.5\n[serve]\nreports_per_hour = 4\n")
    args, sources = layered(["serve", "--config", str(config), "--player-games-rate", "1"],
                            {"QUBIC_REPORTS_PER_HOUR": "6"})
    made = serve.server_config(args)
    assert (made.puzzles_rate, made.player_games_rate, made.reports_per_hour) == (3.5, 1.0, 6)
    assert (sources["puzzles_rate"], sources["player_games_rate"],
            sources["reports_per_hour"]) == ("file", "flag", "env")
    made = serve.server_config(layered(["serve"], {})[0])
    assert (made.puzzles_rate, made.player_games_rate, made.reports_per_hour) == (5.0, 2.0, 10)


def test_the_sqlite_synchronous_setting_from_every_source(tmp_path: Path) -> None:
    """``--synchronous`` (issue 30) reaches the server's configuration in SQLite's words, and
    a value SQLite would take but we do not offer (``off``) is refused."""
    assert serve.server_config(layered(["serve"], {})[0]).synchronous == "FULL"
    args, sources = layered(["serve"], {"QUBIC_SYNCHRONOUS": "normal"})
    assert serve.server_config(args).synchronous == "NORMAL" and sources["synchronous"] == "env"
    config = tmp_path / "q.toml"
    config.write_text('synchronous = "normal"\n')
    args, sources = layered(["serve", "--config", str(config), "--synchronous", "full"], {})
    assert serve.server_config(args).synchronous == "FULL" and sources["synchronous"] == "flag"
    refused = qubic("config", "check", "serve", "--synchronous", "off")
    assert refused.returncode == 2 and "--synchronous" in refused.stderr


def test_the_sqlite_commit_interval_from_every_source(tmp_path: Path) -> None:
    """``--commit-interval`` (issue 30; also ``--commit-window``) is given in milliseconds
    and reaches the server's configuration in seconds, from a flag, the environment or the
    file; ``--commit-max`` (issue 41) likewise, in writes."""
    assert serve.server_config(layered(["serve"], {})[0]).commit_interval == 0.020
    assert serve.server_config(layered(["serve"], {})[0]).commit_max == 64
    args, sources = layered(["serve"], {"QUBIC_COMMIT_INTERVAL": "0"})
    assert serve.server_config(args).commit_interval == 0 and sources["commit_interval"] == "env"
    config = tmp_path / "qubic.toml"
    config.write_text("commit_interval = 5\n")
    args, sources = layered(["serve", "--config", str(config)], {})
    assert serve.server_config(args).commit_interval == 0.005
    assert sources["commit_interval"] == "file"
    args, sources = layered(["serve", "--config", str(config), "--commit-interval", "1"], {})
    assert serve.server_config(args).commit_interval == 0.001
    assert sources["commit_interval"] == "flag"
    args, sources = layered(["serve", "--commit-window", "20"], {"QUBIC_COMMIT_MAX": "8"})
    assert serve.server_config(args).commit_interval == 0.020  # the window's other name
    assert serve.server_config(args).commit_max == 8 and sources["commit_max"] == "env"
    refused = qubic("config", "check", "serve", "--commit-interval", "soon")
    assert refused.returncode == 2 and "--commit-interval" in refused.stderr


def test_pacing_from_every_source(tmp_path: Path) -> None:
    """``--pacing`` (issue 41): on by default, off from a flag, the environment or the file."""
    assert serve.server_config(layered(["serve"], {})[0]).pacing is True
    args, sources = layered(["serve"], {"QUBIC_PACING": "off"})
    assert serve.server_config(args).pacing is False and sources["pacing"] == "env"
    config = tmp_path / "qubic.toml"
    config.write_text('pacing = "off"\n')
    args, sources = layered(["serve", "--config", str(config)], {})
    assert serve.server_config(args).pacing is False and sources["pacing"] == "file"
    args, sources = layered(["serve", "--config", str(config), "--pacing", "on"], {})
    assert serve.server_config(args).pacing is True and sources["pacing"] == "flag"
    refused = qubic("config", "check", "serve", "--pacing", "sometimes")
    assert refused.returncode == 2 and "--pacing" in refused.stderr


COMPUTED_AT_START = {"cores - 1", "host-pid-random", "required"}
"""Defaults operations.md describes that `config check` cannot know before the start (None)."""


def documented_options(command: str) -> dict[str, tuple[str, str]]:
    """operations.md's option table for ``qubic <command>``: each file key with its
    environment variable and its default, as written (backticks dropped)."""
    text = (ROOT / "docs" / "operations.md").read_text()
    tables = re.findall(r"^\| flag \| environment \| file key \| default \| what \|\n"
                        r"\| --- .*\n((?:\|.*\n)+)", text, re.M)
    table = tables[("serve", "worker").index(command)]
    options: dict[str, tuple[str, str]] = {}
    for row in table.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))]
        environment, key, default = cells[1:4]
        keys = re.findall(r"`([a-z_]+)`", key)
        envs = re.findall(r"`(QUBIC_[A-Z_]+)`", environment)
        defaults = [d.strip().strip("`") for d in default.split(",")]
        if not keys:
            continue  # --config: the file itself
        if len(defaults) != len(keys):
            defaults = [default.strip("`")]
        for index, name in enumerate(keys):
            options[name] = (envs[index], defaults[index])
    return options


def same_default(written: str, shown: object) -> bool:
    if shown is None:
        return written in {"none", *COMPUTED_AT_START}
    if isinstance(shown, bool):
        return written == ("on" if shown else "off")
    if isinstance(shown, list):
        return written == "none" and shown == []
    if isinstance(shown, int | float):
        return float(written) == float(shown)
    return written == shown


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_the_option_tables_are_what_config_check_prints(command: str) -> None:
    """Every option of operations.md's table, and no other, is one `config check` prints,
    with the same environment variable and default (issue 39: `--ai-nice` was 10 in the
    table and null in `config check`)."""
    import importlib

    extra = ["--redis", "redis://cache:6379/0"] if command == "worker" else []
    done = qubic("config", "check", command, *extra, "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    documented = documented_options(command)
    assert sorted(documented) == sorted(shown)
    settings = {s.key: s for s in importlib.import_module(f"qubic_cli.{command}").SETTINGS}
    for key, (environment, default) in documented.items():
        assert environment == settings[key].env, key
        if shown[key]["source"] == "default":
            assert same_default(default, shown[key]["value"]), (key, default, shown[key])
