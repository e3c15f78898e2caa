"""The tournaments as this client knows them, and how they read in words. No Textual here.

``TournamentsModel`` keeps the list last asked for (``tournaments``) and the state of each
tournament followed (``tournament_sub``, or joined: the server follows it for the player), so
the screens draw from it and a game of a tournament can name it. The functions below say where
a tournament stands (``stage``), its terms, a score with its halves, and one game's points.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from server.protocol import Standing, TournamentInfo, TournamentList, TournamentState


@dataclass
class TournamentsModel:
    """The list, the states followed, and which of them this client asked to follow."""

    listed: dict[str, TournamentInfo] = field(default_factory=dict)
    states: dict[str, TournamentState] = field(default_factory=dict)
    followed: set[str] = field(default_factory=set)  # asked again after a reconnection
    asked: dict[str, int] = field(default_factory=dict)  # the page asked for, if not one's own
    clock: Callable[[], float] = time.time  # the wall clock the countdowns are read against

    def load(self, reply: TournamentList) -> None:
        """Take the list (a reply to ``tournaments``)."""
        self.listed = {info.id: info for info in reply.tournaments}
        for info in reply.tournaments:  # a followed one's line is as new as its list
            state = self.states.get(info.id)
            if state is not None and state.info != info:
                self.states[info.id] = TournamentState(
                    info=info, standings=state.standings, games=state.games, page=state.page,
                    pages=state.pages, me=state.me)

    def update(self, state: TournamentState) -> None:
        """Take a tournament's state (a reply or an update): kept, its line in the list too."""
        self.states[state.info.id] = state
        self.listed[state.info.id] = state.info
        self.followed.add(state.info.id)

    def forget(self, tournament: str) -> None:
        """No longer follow ``tournament`` (its state goes; its line in the list stays)."""
        self.followed.discard(tournament)
        self.states.pop(tournament, None)
        self.asked.pop(tournament, None)

    def name(self, tournament: str) -> str:
        """The tournament's name, as far as this client knows it (else its id)."""
        info = self.listed.get(tournament)
        return tournament if info is None else info.name

    def entry(self, tournament: str, me: str) -> Standing | None:
        """``me``'s line in the standings of ``tournament`` (None: not in it, or not known):
        the server's ``me``, else the line on the page shown."""
        state = self.states.get(tournament)
        if state is None:
            return None
        mine = me.casefold()
        if state.me is not None and state.me.name.casefold() == mine:
            return state.me
        return next((s for s in state.standings if s.name.casefold() == mine), None)

    def joined(self, tournament: str, me: str) -> bool:
        """Whether ``me`` is in ``tournament`` and has not withdrawn."""
        entry = self.entry(tournament, me)
        return entry is not None and not entry.withdrawn


def until(at: float, now: float) -> str:
    """How long until ``at`` from ``now`` (Unix seconds) in words: ``in 4 min``, ``in 1 h 05``."""
    seconds = max(0, round(at - now))
    if seconds < 60:
        return "now" if seconds <= 1 else f"in {seconds} s"
    minutes = -(-seconds // 60)
    if minutes < 60:
        return f"in {minutes} min"
    return f"in {minutes // 60} h {minutes % 60:02d}"


def kind_name(info: TournamentInfo) -> str:
    return "Swiss" if info.kind == "swiss" else "Arena"


def stage(info: TournamentInfo, now: float | None = None) -> str:
    """Where the tournament stands: when it starts (local time too), its round and when the
    next is due, when it ends."""
    now = time.time() if now is None else now
    kind = kind_name(info)
    if info.status == "finished":
        return f"{kind} · finished"
    if info.status == "created":
        at = time.strftime("%H:%M", time.localtime(info.starts_at))
        return f"{kind} · starts {until(info.starts_at, now)} ({at})"
    if info.kind == "swiss":
        line = f"{kind} · round {info.round or 1} of {info.rounds}"
        if info.next_round_at is not None:  # the next round's time, at the latest
            at = time.strftime("%H:%M", time.localtime(info.next_round_at))
            line += f" · next {until(info.next_round_at, now)} ({at})"
        return line
    return f"{kind} · ends {until(info.ends_at, now)}" if info.ends_at else f"{kind} · playing"


def when(info: TournamentInfo, now: float | None = None) -> str:
    """The list's short column: ``in 4 min``, ``ends in 50 min``, ``round 2/5``, ``over``."""
    now = time.time() if now is None else now
    if info.status == "finished":
        return "over"
    if info.status == "created":
        return until(info.starts_at, now)
    if info.kind == "swiss":
        return f"round {info.round or 1}/{info.rounds}"
    return f"ends {until(info.ends_at, now)}" if info.ends_at else "playing"


def terms(info: TournamentInfo) -> str:
    """Board, clock, rated or casual, a Swiss's rounds, and how many joined."""
    parts = [info.variant, info.clock, "rated" if info.rated else "casual"]
    if info.kind == "swiss" and info.rounds:
        parts.append(f"{info.rounds} rounds")
    parts.append(f"{info.players} player{'' if info.players == 1 else 's'}")
    return " · ".join(parts)


def halves(value: float) -> str:
    """A score with its half as ``½``: 1.5 is ``1½``, 0.5 ``½``, 3.0 ``3``."""
    whole = int(value // 1)
    if value - whole == 0.5:
        return f"{whole}½" if whole else "½"
    return str(whole) if value == whole else str(value)


def point_text(points: int, swiss: bool) -> str:
    """One game's points: an arena's as scored (doubled on fire: 4 a win, 2 a draw), a
    Swiss's given in half points (2 a win or a bye, 1 a draw) shown as 1, ½, 0."""
    return halves(points / 2) if swiss else str(points)
