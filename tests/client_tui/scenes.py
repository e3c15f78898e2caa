"""Fixed server messages that put the client in a known state (for snapshots and safety)."""

from __future__ import annotations

from engine import parse_moves, variant
from server.protocol import (
    ChallengeInfo,
    ChallengeReceived,
    ChatLine,
    Clocks,
    ClockSpec,
    GameEnd,
    GameState,
    GameSummary,
    LobbySnapshot,
    PlayedGame,
    PlayerGamesPage,
    PlayerOnline,
    PlayerProfile,
    RatingChange,
    RatingPoint,
    SeatInfo,
    SeekInfo,
    Standing,
    TournamentGame,
    TournamentInfo,
    TournamentList,
    TournamentState,
)

NOW = 1_767_261_600.0  # 1 January 2026, 10:00 UTC: the tournaments' scenes' wall clock


def lobby(name: str = "bob") -> LobbySnapshot:
    """Three open seeks and two live games; dan is a bot."""
    return LobbySnapshot(
        seeks=[
            SeekInfo(id="s1", name=name, rating=1612, variant="4x4x4",
                     clock=ClockSpec(initial=300, increment=5), rated=True, colour="random"),
            SeekInfo(id="s2", name="cat", rating=1480, variant="3x3x3", clock=None, rated=False,
                     colour="x"),
            SeekInfo(id="s3", name="dan", rating=1733, variant="4x4",
                     clock=ClockSpec(initial=60, increment=1), rated=True, colour="o",
                     bot=True),
        ],
        games=[
            GameSummary(id="g7", variant="4x4x4", clock=None, rated=False, x="eve",
                        o="Computer (level 5)", ply=12),
            GameSummary(id="g8", variant="3x3x3", clock=ClockSpec(initial=180, increment=2),
                        rated=True, x="fay", o="dan", ply=5, o_bot=True),
        ],
        online=7,
        players=[PlayerOnline(name=n, rating=r, bot=n == "dan") for n, r in
                 (("ann", 1500), (name, 1612), ("cat", 1480), ("dan", 1733), ("eve", 1390))],
    )


def challenge(by: str = "dan") -> ChallengeReceived:
    """A rated challenge to ann, with a clock, by ``by``."""
    return ChallengeReceived(challenge=ChallengeInfo(
        id="c1", by=by, to="ann", variant="4x4x4", clock=ClockSpec(initial=300, increment=5),
        rated=True, colour="random"))


def game(x: str = "ann", o: str = "bob", chat: tuple[str, ...] = ("good luck", "you too")
         ) -> GameState:
    """ann (X) against bob (O, to move) in a timed 4x4x4 game, nine moves in."""
    moves = parse_moves("2b2 2c3 1a1 3c3 4d4 1d1 2b3 3b2 1c1", variant("4x4x4"))
    return GameState(
        id="g1", variant="4x4x4", clock=ClockSpec(initial=300, increment=5), rated=True,
        seats=[SeatInfo(name=x, rating=1500), SeatInfo(name=o, rating=1612)],
        moves=moves, clocks=Clocks(x=241_300, o=187_900, running="o"), status="playing",
        version=11, you="x",
        chat=[ChatLine(game="g1", name=[x, o][i % 2], side="xo"[i % 2], text=text, line=i)
              for i, text in enumerate(chat, start=1)],
    )


def threats_game() -> GameState:
    """ann (X, to move) can win at 1d1; bob (O) would win at 2d2: both threats shown."""
    moves = parse_moves("1a1 2a2 1b1 2b2 1c1 2c2", variant("4x4x4"))
    return GameState(
        id="g2", variant="4x4x4", clock=None, rated=False,
        seats=[SeatInfo(name="ann", rating=1500), SeatInfo(name="bob", rating=1612)],
        moves=moves, clocks=None, status="playing", version=8, you="x",
    )


def ended_game() -> GameState:
    """ann (X) has won a rated game along the first row of level 1."""
    moves = parse_moves("1a1 2a1 1b1 2b1 1c1 2c1 1d1", variant("4x4x4"))
    clocks = Clocks(x=280_000, o=250_000, running=None)
    return GameState(
        id="g3", variant="4x4x4", clock=ClockSpec(initial=300, increment=5), rated=True,
        seats=[SeatInfo(name="ann", rating=1500), SeatInfo(name="bob", rating=1612)],
        moves=moves, clocks=clocks, status="over", version=9, you="x",
        end=GameEnd(game="g3", version=9, result="1-0", reason="line", winner="x",
                    line=moves[0::2], clocks=clocks, rating_change=RatingChange(x=9, o=-9)),
    )


def player_page(name: str = "bob") -> PlayerGamesPage:
    """bob's page: his record, the ratings of his last six rated games, four games (one going
    on, one against the bot dan, one against the computer, one aborted) and more to come."""
    day = 1_767_225_600.0  # 1 January 2026, UTC
    ratings = [1500, 1523, 1507, 1541, 1588, 1612]
    games = [
        PlayedGame(id="g9", variant="4x4x4", clock=ClockSpec(initial=300, increment=5),
                   rated=True, side="x", x=name, o="ann", x_ai=None, o_ai=None,
                   status="playing", result=None, reason=None, moves=[0, 21, 42],
                   created=day + 9 * 86400, ended=None, rating=None, rating_change=None),
        PlayedGame(id="g8", variant="4x4x4", clock=None, rated=True, side="o", x="dan",
                   o=name, x_ai=None, o_ai=None, status="over", result="0-1", reason="line",
                   moves=list(range(15)), created=day + 8 * 86400, ended=day + 8 * 86400 + 600,
                   rating=1588, rating_change=24, x_bot=True),
        PlayedGame(id="g7", variant="3x3x3", clock=None, rated=False, side="x", x=name,
                   o="Computer (level 5)", x_ai=None, o_ai=5, status="over", result="0-1",
                   reason="resign", moves=[13, 0, 4, 2], created=day + 7 * 86400,
                   ended=day + 7 * 86400 + 60, rating=None, rating_change=None),
        PlayedGame(id="g6", variant="4x4", clock=None, rated=False, side="o", x="cat", o=name,
                   x_ai=None, o_ai=None, status="over", result="*", reason="abort", moves=[],
                   created=day + 6 * 86400, ended=day + 6 * 86400 + 5, rating=None,
                   rating_change=None),
    ]
    return PlayerGamesPage(
        player=PlayerProfile(name=name, created=day, rating=1612, rd=84, games=9, rated_games=6,
                             wins=5, losses=3, draws=1),
        games=games, next="g6",
        ratings=[RatingPoint(at=day + i * 86400, rating=r) for i, r in enumerate(ratings)],
    )


def arena(status: str = "started", players: int = 5) -> TournamentInfo:
    """The evening arena: 3+2, rated, an hour long, ten minutes in."""
    return TournamentInfo(
        id="T7kq2m9x", name="Evening arena", kind="arena", status=status,  # type: ignore[arg-type]
        starts_at=NOW - 600, ends_at=NOW + 3000, rounds=None, round=None, clock="3+2",
        variant="4x4x4", rated=True, players=players)


def tournament_list() -> TournamentList:
    """An arena going on, a Swiss starting in an hour, an arena finished this morning."""
    return TournamentList(tournaments=[
        arena(),
        TournamentInfo(id="S1", name="Sunday Swiss", kind="swiss", status="created",
                       starts_at=NOW + 3720, ends_at=None, rounds=5, round=0, clock="5+3",
                       variant="4x4x4", rated=True, players=8),
        TournamentInfo(id="T2", name="Morning blitz", kind="arena", status="finished",
                       starts_at=NOW - 9000, ends_at=NOW - 5400, rounds=None, round=None,
                       clock="1+0", variant="3x3x3", rated=False, players=14),
    ])


def standing(rank: int, name: str, points: list[int], computer: int | None = None,
             **flags: bool) -> Standing:
    return Standing(rank=rank, name=name, score=sum(points), points=points,
                    fire=flags.get("fire", False), rating=1500 + 17 * rank,
                    performance=1800 - 60 * rank, games=len(points),
                    playing=flags.get("playing", False), withdrawn=flags.get("withdrawn", False),
                    bot=flags.get("bot", False), computer=computer)


def tournament(me_in: bool = True) -> TournamentState:
    """The evening arena's standings (ann on fire when ``me_in``, else fay in her place, a
    computer player, one who left, eve a bot account) and its games, newest first, two going
    on."""
    me = "ann" if me_in else "fay"
    standings = [
        standing(1, "dan", [2, 2, 4, 4, 0], playing=True),
        standing(2, me, [2, 2, 4], fire=True, playing=True),
        standing(3, "computer-3", [2, 1, 0, 2, 0], computer=3, playing=True),
        standing(3, "Maximilian-Fitzgerald_xy", [1, 2, 2], withdrawn=True),
        standing(5, "eve", [0, 0], bot=True, playing=True),
    ]
    games = [
        TournamentGame(id="g21", x="dan", o="computer-3", round=None, result=None),
        TournamentGame(id="g20", x=me, o="eve", round=None, result=None),
        TournamentGame(id="g19", x="eve", o="dan", round=None, result="0-1"),
        TournamentGame(id="g18", x=me, o="computer-3", round=None, result="1/2-1/2"),
    ]
    return TournamentState(info=arena(players=len(standings)), standings=standings, games=games)


def tournament_game(over: bool = False) -> GameState:
    """ann's game in the evening arena against a bot account, O to move (or won by X)."""
    state = game(x="ann", o="robo")
    state.id = "g20"
    state.tournament = "T7kq2m9x"
    state.seats = [SeatInfo(name="ann", rating=1500), SeatInfo(name="robo", rating=1580, bot=True)]
    if over:
        state.status = "over"
        state.end = GameEnd(game="g20", version=12, result="1-0", reason="resign", winner="x",
                            line=None, clocks=state.clocks, rating_change=None)
        state.version = 12
    return state


def tournament_paged() -> TournamentState:
    """Page 2 of 3 of a bigger arena (ranks 11-20), ann's own line (27th, playing) under it,
    and her game with the page's."""
    standings = [standing(10 + n, f"player{10 + n}", [2] * (12 - n) + [0], playing=n == 3)
                 for n in range(1, 11)]
    me = standing(27, "ann", [0, 2, 0], playing=True)
    games = [
        TournamentGame(id="g40", x="ann", o="zed", round=None, result=None),
        TournamentGame(id="g39", x="player13", o="player30", round=None, result=None),
        TournamentGame(id="g31", x="player11", o="player12", round=None, result="1-0"),
    ]
    return TournamentState(info=arena(players=29), standings=standings, games=games, page=2,
                           pages=3, me=me)
