"""A node pages a tournament's update for its followers ``PAGE_SLICE`` at a time, letting the
event loop run other work in between (issue 43: 500 followers paged in one step held the
other games' moves): every follower still gets the frame it got unsliced, once; one that a
request answered meanwhile is not sent the older update; a newer update while one is being
paged replaces it. No I/O: the service's paging alone, with followers that keep their
frames."""

from __future__ import annotations

import asyncio

import pytest

from server.node import tournaments as service_module
from server.node.tournament_view import Pages, Standings
from server.node.tournaments import TOPIC, TournamentsService
from server.protocol import encode
from server.store.tournaments import TournamentData
from tests.server.node.test_tournament_view import entry, game, tournament


class Follower:
    """What paging uses of a session: its player's name, and where frames go."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.frames: list[bytes] = []

    def send_raw(self, frame: bytes) -> None:
        self.frames.append(frame)


def standings(players: int = 25) -> Standings:
    entries = [entry(n, f"p{n:02}") for n in range(1, players + 1)]
    return Standings.from_data(TournamentData(
        tournament(), entries, [game(1, 1, 2, "1-0", 10.0), game(2, 3, 4, None, None)]))


def service(followers: list[Follower]) -> TournamentsService:
    made = TournamentsService(None, None, None, None)  # type: ignore[arg-type]
    for follower in followers:
        made._follow("T1", follower)  # type: ignore[arg-type]
    return made


def update(state: Standings) -> bytes:
    return b"T1\n" + encode(state.state())


@pytest.fixture
def slice_of_three(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_module, "PAGE_SLICE", 3)


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_every_follower_gets_its_frame_a_slice_a_step(slice_of_three: None) -> None:
    followers = [Follower(f"p{n:02}") for n in range(1, 11)]
    node = service(followers)
    state = standings()
    pages = Pages(state.state())
    node._heard(TOPIC, update(state))
    await asyncio.sleep(0)  # the paging's first step: one slice, then the loop's other work
    assert sum(len(f.frames) for f in followers) == 3
    await settle()
    for follower in followers:  # the frame it got when paging was one step
        name = follower.name
        assert follower.frames == [pages.frame(pages.parts(pages.page_for(None, name), name))]
    node._heard(TOPIC, update(state))  # the same again: nothing new for anyone
    await settle()
    assert all(len(f.frames) == 1 for f in followers)


async def test_a_newer_update_replaces_one_being_paged(slice_of_three: None) -> None:
    followers = [Follower(f"p{n:02}") for n in range(1, 11)]
    node = service(followers)
    state = standings()
    node._heard(TOPIC, update(state))
    await asyncio.sleep(0)
    state.refresh([entry(1, "p01", withdrawn=30.0)])  # on page 1, which all of them see
    newer = Pages(state.state())
    node._heard(TOPIC, update(state))
    await settle()
    for follower in followers:
        name = follower.name
        assert follower.frames[-1] == newer.frame(newer.parts(newer.page_for(None, name), name))
    # the first slice got the older; the others only the newer (the older one's paging
    # stopped there)
    assert all(len(f.frames) == 1 for f in followers[3:])
    assert len(followers[0].frames) == 2  # p01's own line changed
    assert not node._paging  # done, and forgotten


async def test_a_follower_a_request_answered_meanwhile_is_not_sent_the_older(
        slice_of_three: None) -> None:
    followers = [Follower(f"p{n:02}") for n in range(1, 11)]
    node = service(followers)
    node._heard(TOPIC, update(standings()))
    await asyncio.sleep(0)
    late = followers[-1]
    assert not late.frames
    node.followers["T1"][late].asked = asyncio.get_running_loop().time() + 1.0  # type: ignore[index]
    await settle()
    assert not late.frames and all(f.frames for f in followers[:-1])


async def test_a_follower_gone_meanwhile_is_skipped(slice_of_three: None) -> None:
    followers = [Follower(f"p{n:02}") for n in range(1, 11)]
    node = service(followers)
    node._heard(TOPIC, update(standings()))
    await asyncio.sleep(0)
    gone = followers[5]
    node.disconnected(gone)  # type: ignore[arg-type]
    await settle()
    assert not gone.frames and all(f.frames for f in followers if f is not gone)


async def test_the_holder_pages_the_state_it_published_without_decoding_it() -> None:
    """The node that built an update pages the state it encoded (the same frame back from
    the bus); an update it did not build (another node's) is decoded."""
    follower = Follower("p01")
    node = service([follower])
    built, other = standings(25), standings(12)
    frame = encode(built.state())
    node._sent_state["T1"] = (frame, other.state())  # stands for what was encoded
    node._heard(TOPIC, b"T1\n" + frame)
    await settle()
    assert len(follower.frames) == 1
    assert Pages(other.state()).pages == 2 and b'"pages":2' in follower.frames[0]
    node._heard(TOPIC, b"T1\n" + encode(built.state()) + b" ")  # not the frame it sent
    await settle()
    assert b'"pages":3' in follower.frames[-1]
