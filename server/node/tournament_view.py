"""A tournament as the rules see it, rebuilt from its rows, and as clients see it.

``Standings`` holds a tournament's players and games by the rules of its kind
(``server.game.arena.Arena`` or ``server.game.swiss.Swiss``), rebuilt from the database's
record of it (``from_data``: every game in the order it ended) and then kept up to date by the
director one game at a time (``ended``); ``state`` and ``info`` are the protocol's view of it.
Any node can rebuild one, so the node that pairs a tournament can die and another take over.

``Pages`` is one update of a tournament as its followers get it: the whole state cut into
pages of ``PAGE_SIZE`` lines, each page (its lines and its players' games) encoded once, and
each follower's frame put together from the encoded header, its page and its own line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import msgspec

from server.game import swiss as swiss_rules
from server.game.arena import Arena
from server.game.swiss import Game as SwissGame
from server.game.swiss import Swiss
from server.protocol import (
    PAGE_SIZE,
    RequestId,
    Standing,
    TournamentGame,
    TournamentInfo,
    TournamentState,
)
from server.store.tournaments import (
    EntryRecord,
    TournamentData,
    TournamentGameRecord,
    TournamentRecord,
)

GAMES_SHOWN = 200  # the games ended that a state carries (those going on: all of them)
PAGE_GAMES = 20  # the games a page of the live event carries
WINNERS: dict[str | None, Literal["x", "o"] | None] = {"1-0": "x", "0-1": "o", "1/2-1/2": None}


@dataclass
class Standings:
    """One tournament's players, games and scores; see the module docstring."""

    tournament: TournamentRecord
    entries: dict[int, EntryRecord]  # by entry id
    games: list[TournamentGameRecord]  # in the order they started
    arena: Arena | None = None
    swiss: Swiss | None = None
    playing: dict[str, TournamentGameRecord] = field(default_factory=dict)  # by game id
    # what the director looks up many times a second, kept as it goes (a tournament of
    # 500 players plays thousands of games: a scan of them each time was a long loop step)
    _by_name: dict[str, EntryRecord] = field(default_factory=dict, repr=False)
    _at: dict[str, int] = field(default_factory=dict, repr=False)  # game id -> index in games
    _last_id: int = field(default=0, repr=False)  # the largest game row id seen

    def __post_init__(self) -> None:
        self._by_name = {entry.name: entry for entry in self.entries.values()}
        for index, game in enumerate(self.games):
            self._note(game, index)

    @classmethod
    def from_data(cls, data: TournamentData) -> Standings:
        """The tournament as its rows hold it: every player, every game replayed."""
        tournament = data.tournament
        made = cls(tournament, {entry.id: entry for entry in data.entries}, [])
        if tournament.kind == "arena":
            made.arena = Arena()
            for entry in data.entries:
                made.arena.join(entry.name, entry.rating)
                if entry.withdrawn is not None:
                    made.arena.leave(entry.name)
        else:
            made.swiss = Swiss(tournament.rounds or 1)
            for entry in data.entries:
                made.swiss.join(entry.name, entry.rating)
                if entry.withdrawn is not None:
                    made.swiss.withdraw(entry.name)
            made.swiss.current = tournament.round
        for game in sorted(data.games, key=lambda g: g.id):
            made.started(game)
        for game in sorted((g for g in data.games if g.ended is not None),
                           key=lambda g: (g.ended or 0.0, g.id)):
            made.ended(game)
        return made

    def name(self, entry: int) -> str:
        return self.entries[entry].name

    def entry_of(self, name: str) -> EntryRecord | None:
        return self._by_name.get(name)

    def next_game_id(self) -> int:
        """The id the next game's row gets (the rows' largest plus one)."""
        return self._last_id + 1

    def _note(self, game: TournamentGameRecord, index: int) -> None:
        if game.game_id is not None:
            self._at[game.game_id] = index
        self._last_id = max(self._last_id, game.id)

    def refresh(self, entries: list[EntryRecord]) -> bool:
        """The players as the database has them now: who joined, left or came back. False
        if a player's name has changed (a rename): the rules know players by name, so the
        tournament must be rebuilt from its rows (``from_data``)."""
        if any(e.id in self.entries and self.entries[e.id].name != e.name for e in entries):
            return False
        for entry in entries:
            known = self.entries.get(entry.id)
            self.entries[entry.id] = self._by_name[entry.name] = entry
            if known is not None and (known.withdrawn is None) == (entry.withdrawn is None):
                continue
            if self.arena is not None:
                if entry.withdrawn is None:
                    self.arena.join(entry.name, entry.rating)
                else:
                    self.arena.leave(entry.name)
            elif self.swiss is not None:
                if entry.withdrawn is not None:
                    self.swiss.withdraw(entry.name)
                elif entry.name in self.swiss.entrants:
                    self.swiss.entrants[entry.name].present = True
                elif not self.swiss.current:
                    self.swiss.join(entry.name, entry.rating)
        return True

    def started(self, game: TournamentGameRecord) -> None:
        """A game (or a Swiss's bye) of the tournament has started."""
        self.games.append(game)
        self._note(game, len(self.games) - 1)
        if game.game_id is not None and game.ended is None:
            self.playing[game.game_id] = game
        if self.swiss is not None and game.round is not None:
            x = self.swiss.entrants.get(self.name(game.x))
            if x is None:
                return
            if game.o is None:
                x.games[game.round] = None
                return
            o = self.swiss.entrants.get(self.name(game.o))
            if o is not None:
                x.games[game.round] = SwissGame(o.name, "x")
                o.games[game.round] = SwissGame(x.name, "o")

    def ended(self, game: TournamentGameRecord) -> None:
        """A game of the tournament has ended (``game`` as recorded): score it."""
        if game.game_id is None or game.o is None:
            return  # a bye scores as it starts
        self.playing.pop(game.game_id, None)
        at = self._at.get(game.game_id)
        if at is not None:
            self.games[at] = game
        x, o = self.name(game.x), self.name(game.o)
        if self.arena is not None:
            plies = 0 if game.result == "*" else (game.plies or 0)
            self.arena.record(x, o, WINNERS.get(game.result), max(plies, 0))
        elif self.swiss is not None and game.round is not None:
            if game.result == "*":  # aborted: nothing for either
                points = (swiss_rules.LOSS, swiss_rules.LOSS)
            else:
                points = {None: (swiss_rules.DRAW, swiss_rules.DRAW),
                          "x": (swiss_rules.WIN, swiss_rules.LOSS),
                          "o": (swiss_rules.LOSS, swiss_rules.WIN)}[WINNERS.get(game.result)]
            for name, other, colour, got in ((x, o, "x", points[0]), (o, x, "o", points[1])):
                entrant = self.swiss.entrants.get(name)
                if entrant is not None:
                    entrant.games[game.round] = SwissGame(other, colour, got)  # type: ignore[arg-type]

    def busy(self) -> set[str]:
        """The players in a game of the tournament now."""
        return {self.name(entry) for game in self.playing.values()
                for entry in (game.x, game.o) if entry is not None}

    # -- the protocol's view ---------------------------------------------------------------

    def info(self) -> TournamentInfo:
        return tournament_info(self.tournament, len(self.entries), self.round_started())

    def round_started(self) -> float | None:
        """When a Swiss's round being played began (its first game or bye); None before the
        first, or for an arena."""
        current = self.tournament.round
        if self.swiss is None or not current:
            return None
        return min((g.started for g in self.games if g.round == current), default=None)

    def state(self, ref: str | int | None = None, every_game: bool = False
              ) -> TournamentState:
        """The whole tournament: every line of the standings, the games going on and the
        ``GAMES_SHOWN`` newest ended (``every_game``: all of them), newest first."""
        games = []
        ended = 0
        playing = len(self.playing)  # those going on, all shown (a scan stops at the last)
        for g in reversed(self.games):
            if not every_game and ended >= GAMES_SHOWN and not playing:
                break
            if g.game_id is None or g.o is None or g.result == "*":
                continue
            if g.ended is not None:
                if not every_game and ended >= GAMES_SHOWN:
                    continue
                ended += 1
            elif g.game_id in self.playing:
                playing -= 1
            games.append(TournamentGame(id=g.game_id or "", x=self.name(g.x),
                                        o=self.name(g.o or 0), round=g.round,
                                        result=_result(g.result)))
        standings = self.standings()
        return TournamentState(info=self.info(), standings=standings, games=games,
                               pages=page_count(len(standings)), ref=ref)

    def standings(self) -> list[Standing]:
        busy = self.busy()
        by_name = {entry.name: entry for entry in self.entries.values()}

        def line(rank: int, name: str, score: float, points: list[int], fire: bool,
                 performance: int, games: int, buchholz: float | None = None,
                 berger: float | None = None) -> Standing:
            entry = by_name.get(name)
            return Standing(
                rank=rank, name=name, score=int(score) if score == int(score) else score,
                points=points, fire=fire, rating=entry.rating if entry else 1500,
                performance=performance, games=games, playing=name in busy,
                withdrawn=entry is not None and entry.withdrawn is not None,
                bot=entry is not None and entry.bot,
                computer=None if entry is None else entry.computer,
                buchholz=buchholz, sonneborn_berger=berger)

        if self.arena is not None:
            entries = self.arena.entries
            return [line(row.rank, row.name, row.score, list(row.points), row.fire,
                         entries[row.name].performance, row.games)
                    for row in self.arena.standings()]
        assert self.swiss is not None
        rows = []
        for row in self.swiss.standings():
            entrant = self.swiss.entrants[row.name]
            points = [swiss_rules.BYE if game is None else game.points or 0
                      for _, game in sorted(entrant.games.items())
                      if game is None or game.points is not None]
            rows.append(line(row.rank, row.name, row.score, points, False,
                             self._performance(row.name), len(points), row.buchholz,
                             row.sonneborn_berger))
        return rows

    def _performance(self, name: str) -> int:
        """A Swiss player's performance as an arena's: the opponents' average, ±500 a net
        win, over the games played to a result (a bye counts for nothing)."""
        assert self.swiss is not None
        entrant = self.swiss.entrants[name]
        played = [g for g in entrant.games.values() if g is not None and g.points is not None]
        if not played:
            return entrant.rating
        total = sum(self.swiss.entrants[g.opponent].rating for g in played
                    if g.opponent in self.swiss.entrants)
        net = sum(1 if g.points == swiss_rules.WIN else -1 if g.points == swiss_rules.LOSS
                  else 0 for g in played)
        return round((total + 500 * net) / len(played))


def page_count(lines: int) -> int:
    return max(1, -(-lines // PAGE_SIZE))


class _Frame(msgspec.Struct, tag_field="t", tag="tournament", kw_only=True, gc=False):
    """A ``tournament`` event put together from parts already encoded (``Pages``); it
    decodes as ``TournamentState``."""

    info: msgspec.Raw
    standings: msgspec.Raw
    games: msgspec.Raw
    page: int
    pages: int
    me: msgspec.Raw
    ref: RequestId | None = None


_NULL = b"null"
_encode = msgspec.json.Encoder().encode  # the protocol's ``encode`` is for messages only


class Pages:
    """One update of a tournament, paged for its followers (the module docstring): from the
    whole ``state`` (``Standings.state``), each page and each player's own line encoded at
    most once, however many follow it."""

    def __init__(self, state: TournamentState) -> None:
        self.state = state
        self.pages = page_count(len(state.standings))
        self.info = _encode(state.info)
        self._index = {line.name.casefold(): n for n, line in enumerate(state.standings)}
        self._pages: dict[int, tuple[bytes, bytes]] = {}
        self._own: dict[str, bytes] = {}

    def own_line(self, name: str | None) -> Standing | None:
        index = None if name is None else self._index.get(name.casefold())
        return None if index is None else self.state.standings[index]

    def page_for(self, asked: int | None, name: str | None) -> int:
        """The page a follower sees: the one asked for (past the last: the last), else the
        one holding their own line, else the first."""
        if asked is not None:
            return min(asked, self.pages)
        index = None if name is None else self._index.get(name.casefold())
        return 1 if index is None else index // PAGE_SIZE + 1

    def lines(self, page: int) -> list[Standing]:
        return self.state.standings[(page - 1) * PAGE_SIZE:page * PAGE_SIZE]

    def games(self, page: int, name: str | None = None) -> list[TournamentGame]:
        """The games of the page's players, going on first, then the newest, at most
        ``PAGE_GAMES``; and the game ``name`` plays now if they are not on the page."""
        names = {line.name for line in self.lines(page)}
        theirs = [g for g in self.state.games if g.x in names or g.o in names]
        shown = ([g for g in theirs if g.result is None]
                 + [g for g in theirs if g.result is not None])[:PAGE_GAMES]
        own = self.own_line(name)
        if own is not None and own.playing and own.name not in names:
            shown[:0] = [g for g in self.state.games
                         if g.result is None and own.name in (g.x, g.o)][:1]
        return shown

    def parts(self, page: int, name: str | None) -> tuple[int, bytes, bytes, bytes, bytes]:
        """What a follower on ``page`` named ``name`` is shown, encoded: the page, the
        header, the page's lines, its games, the own line. Equal parts: nothing new to
        send."""
        encoded = self._pages.get(page)
        if encoded is None:
            encoded = self._pages[page] = (_encode(self.lines(page)), _encode(self.games(page)))
        lines, games = encoded
        own = self.own_line(name)
        me = _NULL
        if own is not None:
            me = self._own.get(own.name) or self._own.setdefault(own.name, _encode(own))
            if own.playing and self.page_for(None, own.name) != page:  # and their game
                games = _encode(self.games(page, own.name))
        return page, self.info, lines, games, me

    def frame(self, parts: tuple[int, bytes, bytes, bytes, bytes],
              ref: str | int | None = None) -> bytes:
        """The ``tournament`` event of ``parts`` (``parts``)."""
        page, info, lines, games, me = parts
        return _encode(_Frame(info=msgspec.Raw(info), standings=msgspec.Raw(lines),
                             games=msgspec.Raw(games), page=page, pages=self.pages,
                             me=msgspec.Raw(me), ref=ref))

    def view(self, page: int, name: str | None = None,
             ref: str | int | None = None) -> TournamentState:
        """The same as a message (HTTP's ``?page=``, and tests)."""
        return TournamentState(info=self.state.info, standings=self.lines(page),
                               games=self.games(page, name), page=page, pages=self.pages,
                               me=self.own_line(name), ref=ref)


def tournament_info(t: TournamentRecord, players: int,
                    round_started: float | None = None) -> TournamentInfo:
    """The tournament as lists show it (``round_started``: when a Swiss's round being played
    began, for its next round's due time)."""
    swiss = t.kind == "swiss"
    next_round_at = None
    if swiss and t.status == "started" and t.round and t.round < (t.rounds or 0) \
            and round_started is not None:
        next_round_at = t.round_due(t.round + 1, round_started)
    return TournamentInfo(
        id=t.id, name=t.name, kind=t.kind, status=t.status, starts_at=t.starts_at,
        ends_at=t.ends_at if not swiss or t.status == "finished" else None,
        rounds=t.rounds if swiss else None, round=t.round if swiss else None,
        clock=t.clock_text, variant=t.variant,  # type: ignore[arg-type]
        rated=t.rated, players=players, next_round_at=next_round_at)


def _result(result: str | None) -> Literal["1-0", "0-1", "1/2-1/2"] | None:
    return result if result in ("1-0", "0-1", "1/2-1/2") else None  # type: ignore[return-value]

