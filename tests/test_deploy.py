"""What can be checked of deploy/ without pulling container images (CI cannot): the compose
file parses and every Qubic service's command and environment are accepted by ``qubic config
check``; the dashboard's every query names a metric the server exports; the systemd unit runs
``qubic serve`` as an unprivileged user with its secret as a credential; the Dockerfile is
small-image, non-root, warmed and health-checked. docs/operations.md says what was not run."""

from __future__ import annotations

import configparser
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from server import exposition

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
CHECKED = ("serve", "worker")  # the commands `qubic config check` knows


def exported_names() -> set[str]:
    """Every sample name the server can export, by the exposition's own rules."""
    names = {"qubic_build_info"}
    for family in exposition.HELP:
        if family.startswith("process_"):
            names.add(family)
            continue
        base = f"qubic_{family}"
        names |= {base, f"{base}_total", f"{base}_bucket", f"{base}_sum", f"{base}_count"}
    return names


def test_every_dashboard_query_names_an_exported_metric() -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "qubic.json").read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    assert len(exprs) >= 10
    used = {name for expr in exprs for name in re.findall(r"\b(?:qubic|process)_[a-z_]+", expr)}
    assert used and sorted(used - exported_names()) == []


def test_the_exporters_rules_are_not_vacuous() -> None:
    assert "qubic_moves_total" in exported_names()
    assert "qubic_made_up_total" not in exported_names()


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_the_compose_file_has_the_cluster() -> None:
    services = compose()["services"]
    assert {"postgres", "redis", "node-a", "node-b", "worker", "proxy"} <= set(services)
    for name in ("node-a", "node-b", "worker"):
        assert services[name]["image"].startswith("qubic:")
        for value in services[name]["environment"].values():
            assert "://" not in str(value), "a URL (and its password) belongs in a secret file"


@pytest.mark.parametrize("service", ["node-a", "node-b", "worker"])
def test_each_qubic_service_is_accepted_by_config_check(service: str, tmp_path: Path) -> None:
    spec = compose()["services"][service]
    command, *flags = spec["command"]
    if command not in CHECKED:
        pytest.skip(f"qubic config check does not know `qubic {command}` yet (issue 28)")
    secrets = {"database_url": "postgresql://qubic:pw@postgres/qubic",
               "redis_url": "redis://redis:6379/0", "metrics_token": "t0ken"}
    for name, value in secrets.items():
        (tmp_path / name).write_text(value)
    config = str(DEPLOY / "qubic.toml")
    flags = [config if f == "/etc/qubic/qubic.toml" else f for f in flags]
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUBIC_")}
    for key, value in spec["environment"].items():
        env[key] = str(value).replace("/run/secrets", str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "qubic_cli", "config", "check", command,
                           *flags, "--json"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["redis"] == {"value": "redis://redis:6379/0", "source": "env"}
    if command == "serve":
        assert shown["database"]["value"] == "postgresql://qubic:***@postgres/qubic"
        assert shown["host"]["value"] == "0.0.0.0"
        assert shown["metrics_listen"]["value"] == "0.0.0.0:9100"
    else:
        assert shown["levels"] == {"value": "1-8", "source": "file"}


def test_the_systemd_unit_serves_unprivileged_with_its_secret_as_a_credential() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(DEPLOY / "qubic.service")
    service = unit["Service"]
    assert service["ExecStart"].split()[1:3] == ["serve", "--config"]
    assert service["User"] not in ("root", "0")
    assert "QUBIC_DATABASE_URL_FILE" in (DEPLOY / "qubic.service").read_text()
    assert "://" not in service["ExecStart"]


def test_the_dockerfile_is_non_root_warm_and_health_checked() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim", text, re.M)
    assert re.search(r"^USER qubic$", text, re.M)
    assert "warm_up()" in text and "HEALTHCHECK" in text and "/health" in text
    installs = re.findall(r"^RUN pip install .*$", text, re.M)
    assert installs == ['RUN pip install --no-cache-dir "$(ls /wheels/qubic-*.whl)[cluster]" '
                        "&& rm -rf /wheels"]
