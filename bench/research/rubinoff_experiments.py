"""Re-run the experiments of Rubinoff's paper (seed 001) and print our tables beside hers.

    .venv/bin/python bench/research/rubinoff_experiments.py --games 20 [--seed 0] [--only depth]

Columns: her result, ours, wins as X of A and B, games distinct up to symmetry, the Elo of A
relative to B, and per move the evaluations and branching factor of A and B.

Every contest is ``engine.players.arena.run_match`` (the same as ``qubic arena``): A has X in the
even-numbered games, ties among equal moves are broken at random from per-game seeds drawn
from ``--seed``, so a run replays exactly. Her figures are wins out of 20 with no colour
information; ours are A wins - B wins - draws.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from engine.kernels.negamax import warm_up
from engine.players.arena import MatchResult, run_match
from engine.rules.geometry import variant


@dataclass(frozen=True)
class Contest:
    group: str
    label: str
    a: str
    b: str
    paper: tuple[int, int, int]  # her A wins, B wins, ties (out of 20)


CONTESTS = [
    Contest("eval", "Eval1 vs Eval2", "rubinoff:eval=eval1", "rubinoff:eval=eval2", (11, 9, 0)),
    Contest("eval", "Eval2 vs EvalSame", "rubinoff:eval=eval2", "rubinoff:eval=same", (11, 9, 0)),
    Contest("eval", "Eval2 vs EvalAbsolute", "rubinoff:eval=eval2", "rubinoff:eval=absolute",
            (20, 0, 0)),
    Contest("depth", "1ply vs 2ply", "rubinoff:depth=1", "rubinoff:depth=2", (11, 9, 0)),
    Contest("depth", "2ply vs 3ply", "rubinoff:depth=2", "rubinoff:depth=3", (10, 9, 1)),
    Contest("depth", "3ply vs 4ply", "rubinoff:depth=3", "rubinoff:depth=4", (11, 9, 0)),
    Contest("ab", "Minimax vs Alpha-Beta (2ply)", "rubinoff:depth=2,ab=off", "rubinoff:depth=2",
            (9, 10, 1)),
]

# Her minimax vs alpha-beta averages per move (lookahead 2): move time, evaluations, b.f.
PAPER_AB = {"minimax": (0.02847619, 10428.38095, 18.11034488),
            "alpha-beta": (0.028090909, 9867.227273, 17.60661279)}


def distinct_games(result: MatchResult) -> int:
    """How many games differ up to the board's 192 symmetries."""
    symmetries = variant(result.variant).symmetries
    return len({min(tuple(s[c] for c in r.cells()) for s in symmetries) for r in result.records})


def contest_row(contest: Contest, result: MatchResult, seconds: float) -> str:
    pa, pb, pd = contest.paper
    branching = [s.average_branching for s in (result.a, result.b)]
    bf = " / ".join("-" if b is None else f"{b:.1f}" for b in branching)
    ours = f"{result.a.wins}-{result.b.wins}-{result.draws}"
    x_wins = f"{result.a.wins_as_x}/{result.b.wins_as_x}"
    return (f"{contest.label:<30} {f'{pa}-{pb}-{pd}':<11} {ours:<14} {x_wins:<7} "
            f"{distinct_games(result):>5}  {_elo(result):<16} "
            f"{result.a.average_evaluations:>9.0f} / {result.b.average_evaluations:<9.0f} "
            f"{bf:<12} {seconds:>6.1f}")


def _elo(result: MatchResult) -> str:
    elo = result.elo()
    if elo.elo is None:
        return "+inf" if elo.score >= 1 else "-inf"
    return f"{elo.elo:+.0f}" + (" ± inf" if elo.margin is None else f" ± {elo.margin:.0f}")


def alphabeta_table(result: MatchResult) -> list[str]:
    """Her second experiment: per-move averages and per-game branching of both players."""
    lines = [f"{'':<11} {'move time':>10} {'evals':>9} {'nodes':>9} {'avg b.f.':>9}"
             f"   paper: {'move time':>9} {'evals':>9} {'avg b.f.':>9}"]
    for name, stats in (("minimax", result.a), ("alpha-beta", result.b)):
        p_time, p_evals, p_bf = PAPER_AB[name]
        lines.append(f"{name:<11} {stats.average_seconds:>10.5f} "
                     f"{stats.average_evaluations:>9.0f} {stats.average_nodes:>9.0f} "
                     f"{stats.average_branching or 0:>9.2f}"
                     f"   {'':7}{p_time:>9.4f} {p_evals:>9.0f} {p_bf:>9.2f}")
    lines.append("average branching factor per move over each of the first 10 games "
                 "(minimax / alpha-beta):")
    for record in result.records[:10]:
        a, b = record.average_branching("a"), record.average_branching("b")
        lines.append(f"  game {record.index:>2} ({'minimax' if record.a_is_x else 'alpha-beta'}"
                     f" is X, {len(record.moves)} moves): {a or 0:6.2f} / {b or 0:6.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=sorted({c.group for c in CONTESTS}),
                        help="run one group of contests: eval, depth or ab")
    args = parser.parse_args()
    warm_up()
    print(f"Rubinoff's contests re-run: {args.games} games each, seed {args.seed}; "
          f"A has X in even games")
    print(f"{'contest (A vs B)':<30} {'paper A-B-T':<11} {'ours A-B-D':<14} "
          f"{'X wins':<7} {'games':>5}  {'Elo A-B (95%)':<16} {'evals/move A / B':<21} "
          f"{'b.f. A / B':<12} {'secs':>6}")
    ab_result = None
    for contest in CONTESTS:
        if args.only and contest.group != args.only:
            continue
        started = time.perf_counter()
        result = run_match(contest.a, contest.b, args.games, "4x4x4", args.seed)
        print(contest_row(contest, result, time.perf_counter() - started), flush=True)
        if contest.group == "ab":
            ab_result = result
    if ab_result is not None:
        print()
        print("\n".join(alphabeta_table(ab_result)))


if __name__ == "__main__":
    main()
