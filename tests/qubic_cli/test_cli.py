"""The ``qubic`` command: help, ``analyse`` and ``arena``, through ``main(argv)`` and a process."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from qubic_cli.main import main

WIN_IN_ONE = "1a1 4d4 1b1 4c4 1c1 4a1"  # X to move: 1d1 completes level 1, row 1
MUST_BLOCK = "1a1 4d4 1b1 4c4 1c1"  # O to move: only 1d1 stops X
PLAYERS = ["bogenschutz", "wood", "freeness", "rubinoff", "rubinoff:eval=absolute,ab=off"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [["--help"], ["arena", "--help"], ["analyse", "--help"]])
def test_help_is_there_and_informative(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: qubic")
    if argv == ["--help"]:
        assert "arena" in out and "analyse" in out
    else:
        assert "--variant" in out and "--time" in out and "--depth" in out
        assert "rubinoff" in out and "eval=" in out  # the players and their options


def test_python_dash_m_runs_the_same_command() -> None:
    done = subprocess.run([sys.executable, "-m", "qubic_cli", "analyse", "--moves", WIN_IN_ONE,
                           "--player", "wood", "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["move"] == "1d1"


def test_analyse_json_has_the_decision(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["analyse", "--moves", WIN_IN_ONE, "--json", "--depth", "2"], capsys)
    assert code == 0 and err == ""
    data = json.loads(out)
    expected = {"move", "cell", "score", "depth", "nodes", "elapsed", "forced", "evaluations",
                "pv", "branching", "player"}
    assert expected <= set(data)
    assert data["move"] == "1d1" and data["cell"] == 3
    assert data["forced"] == {"result": "win", "plies": 1}
    assert data["depth"] == 2 and data["nodes"] > 0 and data["evaluations"] > 0
    assert data["pv"][0] == "1d1" and data["player"] == "bogenschutz"
    assert data["side"] == "X" and data["ply"] == 6


def test_analyse_reports_no_forced_result_in_a_quiet_position(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["analyse", "--moves", "1a1 2b2", "--player", "rubinoff:depth=2",
                        "--json", "--seed", "4"], capsys)
    data = json.loads(out)
    assert code == 0 and data["forced"] is None and data["player"] == "rubinoff:depth=2"
    assert isinstance(data["score"], int) and len(data["pv"]) == 2


@pytest.mark.parametrize("player", PLAYERS)
@pytest.mark.parametrize("moves", [WIN_IN_ONE, MUST_BLOCK])
def test_analyse_wins_and_blocks(player: str, moves: str,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["analyse", "--moves", moves, "--player", player, "--json"], capsys)
    assert code == 0
    assert json.loads(out)["move"] == "1d1"


def test_analyse_human_output_shows_the_board_and_the_search(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["analyse", "--moves", MUST_BLOCK], capsys)
    assert code == 0
    assert "level 1" in out and "1 X X X ." in out
    for label in ("move ", "score", "depth", "nodes", "nodes/s", "pv "):
        assert label in out
    assert "1d1 (cell 3)" in out


def test_analyse_takes_a_time_limit(capsys: pytest.CaptureFixture[str]) -> None:
    """A depth of 60 plies it could not reach in hours: the answer comes only because the
    time limit stopped the search (else the test's own timeout fails it)."""
    code, out, _ = run(["analyse", "--moves", "1a1", "--time", "0.2", "--depth", "60",
                        "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and 1 <= data["depth"] < 60 and data["forced"] is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--moves", "1a1 zz"], "bad move list: move 2: 'zz' is not a cell of 4x4x4"),
        (["--moves", "1a1 1a1"], "bad move list: move 2: 1a1 is already taken"),
        (["--moves", WIN_IN_ONE + " 1d1 2a2"], "move 8: the game is over"),
        (["--moves", WIN_IN_ONE + " 1d1"], "X has won on the line 1a1 1b1 1c1 1d1"),
        (["--variant", "3x3", "--moves", "a1 b1 a2 b2 c3 a3 b3 c2 c1"],
         "drawn, the board is full"),
        (["--variant", "3x3", "--moves", "a3 a2 b2 c3 a1 c1 c2"], "a dead draw"),
        (["--player", "nobody"], "unknown player spec: no player named 'nobody'"),
        (["--player", "rubinoff:depth=9"], "unknown player spec: rubinoff: option depth"),
    ],
)
def test_analyse_refuses_bad_input_in_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["analyse", *argv], capsys)
    assert code == 2 and out == ""
    assert err.startswith("qubic analyse: error: ") and message in err
    assert err.count("\n") == 1


def test_arena_json_counts_add_up(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["arena", "--a", "wood", "--b", "freeness", "--games", "5",
                        "--variant", "3x3x3", "--seed", "2", "--json", "--no-progress"], capsys)
    data = json.loads(out)
    assert code == 0
    assert data["games"] == 5 == data["a_wins"] + data["b_wins"] + data["draws"]
    for side, wins, losses in (("a", "a_wins", "b_wins"), ("b", "b_wins", "a_wins")):
        assert data[side]["wins"] == data[wins] and data[side]["losses"] == data[losses]
        assert data[side]["draws"] == data["draws"]
    assert {"avg_move_seconds", "avg_evaluations", "avg_branching"} <= set(data["a"])
    assert set(data["elo"]) >= {"a_minus_b", "margin95"}


def test_arena_prints_rubinoffs_table_with_a_progress_bar_on_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["arena", "--a", "rubinoff:depth=1", "--b", "rubinoff:depth=2,ab=off",
                        "--games", "2", "--depth", "1", "--progress"], capsys)
    assert code == 0
    assert "2 games on 4x4x4" in out and "limit depth 1" in out
    assert "A  rubinoff:depth=1" in out and "B  rubinoff:depth=2,ab=off" in out
    assert "Elo of A relative to B" in out


def test_arena_refuses_an_unknown_player(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["arena", "--a", "bogenschutz", "--b", "nobody:depth=3"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("qubic arena: error: unknown player spec") and err.count("\n") == 1


def test_bogenschutz_beats_random(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["arena", "--a", "bogenschutz", "--b", "random", "--games", "20",
                        "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["games"] == 20
    assert data["a_wins"] >= 18
    assert data["elo"]["a_minus_b"] is None or data["elo"]["a_minus_b"] > 0


def test_analyse_master_reports_a_proved_win_and_a_winning_move(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 3's check: positions of the forced-win suite (labelled by the separate solver in
    tests/engine/forced_wins) through `qubic analyse --player master --time 1 --json`."""
    from pathlib import Path

    suite = json.loads((Path(__file__).parents[1] / "engine" / "forced_wins" / "suite.json")
                       .read_text())
    picked = [e for e in suite if e["plies"] == 5][:2] + [e for e in suite if e["plies"] == 7][:2]
    for entry in picked:
        code, out, _ = run(["analyse", "--moves", entry["moves"], "--player", "master",
                            "--time", "1", "--json"], capsys)
        data = json.loads(out)
        assert code == 0 and data["side"] == entry["to_move"]
        assert data["forced"]["result"] == "win", entry["moves"]
        assert data["forced"]["plies"] >= entry["plies"]  # never a faster win than exists
        assert data["move"] in entry["winning"], entry["moves"]


def test_version_is_the_packages(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"qubic {version('qubic-game')}"


def test_prove_a_subtree(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["prove", "--subtree", "1a1 4d4 4a1 1a4 1d1 1b1", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["proved"] and data["gaps"] == []
    assert data["x_positions"] > 100 and data["threat_searches"] > 0
    code, out, _ = run(["prove", "--subtree", "1a1 4d4 4a1 1a4 1d1 1b1", "--verify"], capsys)
    assert code == 0 and "verified: X wins every line" in out


def test_prove_lists_a_gap_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    """X's 1b2 (an edge-or-face cell, not the strategy's corner class) leaves the proof's
    tree at once: replayed from the shipped file with no search, the walk stops there, names
    the position and fails, in text and in JSON."""
    code, out, _ = run(["prove", "--subtree", "1b2 4d4", "--verify"], capsys)
    assert code == 1
    assert "NOT proved: 1 gaps" in out
    assert "gap: 1b2 4d4 (not in the completed dictionary)" in out
    assert "verified: X wins every line" not in out
    code, out, _ = run(["prove", "--subtree", "1b2 4d4", "--verify", "--json"], capsys)
    data = json.loads(out)
    assert code == 1 and data["proved"] is False
    assert data["gaps"] == [{"moves": "1b2 4d4", "reason": "not in the completed dictionary"}]


def test_prove_verify_reports_a_broken_strategy_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--strategy names the file to replay: a corrupt one is a gap at the start, exit 1, no
    traceback (it raised LZMAError before)."""
    path = tmp_path / "broken.strategy.xz"
    path.write_bytes(b"\xfd7zXZ\x00 cut short")
    code, out, err = run(["prove", "--subtree", "1a1 4d4 4a1 1a4", "--verify",
                          "--strategy", str(path), "--json"], capsys)
    data = json.loads(out)
    assert code == 1 and data["proved"] is False and "Traceback" not in err
    assert [gap["moves"] for gap in data["gaps"]] == ["1a1 4d4 4a1 1a4"]
    assert data["gaps"][0]["reason"].startswith("the completed dictionary cannot be read: ")


@pytest.mark.parametrize("argv", [["--subtree", "1a1"], ["--subtree", "9z9"],
                                  ["--subtree", "1a1 1b1", "--save"]])
def test_prove_refuses_bad_input(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["prove", *argv], capsys)
    assert code == 2 and err.startswith("qubic prove: error: ")


def test_analyse_json_has_the_truth(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["analyse", "--moves", "1a1 2b2", "--depth", "1", "--json"], capsys)
    truth = json.loads(out)["truth"]
    assert code == 0 and truth["verdict"] == "win" and truth["proved_by"] == "book"
    assert truth["moves"][0]["verdict"] == "loss" and truth["moves"][0]["plies"] is not None


def test_serve_help_says_where_metrics_are(capsys: pytest.CaptureFixture[str]) -> None:
    """/metrics is on the game's port only without --metrics-listen (issue 39)."""
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "/metrics (Prometheus) unless --metrics-listen moves it" in out
    assert "metrics on one port" not in out
