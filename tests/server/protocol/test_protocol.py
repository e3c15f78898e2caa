"""The wire protocol: round trips, every class of bad input, and that nothing else escapes."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server import protocol as p
from server.errors import ClaimTooEarly, ProtocolError

CLOCK = p.ClockSpec(initial=300, increment=5)
SEEK = p.SeekInfo(
    id="s1", name="ann", rating=1500, variant="4x4x4", clock=CLOCK, rated=True, colour="x"
)
SUMMARY = p.GameSummary(id="g1", variant="3x3x3", clock=None, rated=False, x="ann", o="bob", ply=3)
CLOCKS = p.Clocks(x=299000, o=300000, running="o")
END = p.GameEnd(
    game="g1",
    version=9,
    result="1-0",
    reason="line",
    winner="x",
    line=[0, 21, 42, 63],
    clocks=CLOCKS,
    rating_change=p.RatingChange(x=12, o=-12),
)
CHALLENGE = p.ChallengeInfo(id="c1", by="ann", to="bob", variant="4x4", clock=None, rated=False,
                            colour="random")
CHAT = p.ChatLine(game="g1", name="ann", side="x", text="good luck", line=3)

TOURNEY = p.TournamentInfo(id="T7kq2m9x", name="Evening arena", kind="arena", status="started",
                           starts_at=1764180000.0, ends_at=1764183600.0, rounds=None,
                           round=None, clock="3+2", variant="4x4x4", rated=True, players=12)

CLIENT_EXAMPLES: list[p.ClientMessage] = [
    p.Hello(name="ann"),
    p.Hello(token="abc_DEF-123", id=1),
    p.LobbySub(id="r1"),
    p.LobbyUnsub(),
    p.Seek(variant="3x3x3", clock=CLOCK, rated=True, colour="o"),
    p.CancelSeek(seek="s1"),
    p.AcceptSeek(seek="s1", id=7),
    p.Quick(variant="4x4", clock=None),
    p.CancelQuick(),
    p.PrivateCreate(variant="4x4x4", clock=CLOCK, colour="random"),
    p.PrivateJoin(code="Q7x9kLm2"),
    p.PrivateCancel(id=12),
    p.Challenge(name="bob", variant="4x4", clock=CLOCK, rated=True, colour="o", id=9),
    p.ChallengeAccept(challenge="c1"),
    p.ChallengeDecline(challenge="c1", id="d"),
    p.ChallengeCancel(challenge="c1"),
    p.PlayAI(level=8, variant="3x3x3", colour="x", clock=CLOCK),
    p.Watch(game="g1", since=12),
    p.Unwatch(game="g1"),
    p.Move(game="g1", cell="2b3", ply=4, id="m5"),
    p.Move(game="g1", cell=63, ply=0),
    p.Resign(game="g1"),
    p.DrawOffer(game="g1"),
    p.DrawAccept(game="g1"),
    p.DrawDecline(game="g1"),
    p.Abort(game="g1"),
    p.Rematch(game="g1"),
    p.Claim(game="g1"),
    p.Chat(game="g1", text="gg, well played ✓"),
    p.Hint(game="g1", id=4),
    p.TakeBack(game="g1"),
    p.PlayerGames(name="ann", before="g1", limit=10, id=31),
    p.Ping(id=-3),
    p.ReviewGame(game="g1", id=23),
    p.SetPassword(password="correct horse battery", id="p1"),
    p.SetPassword(password="a new passphrase", current="correct horse battery"),
    p.Login(name="ann", password="correct horse battery", device="laptop", id="login"),
    p.Recover(name="ann", recovery_code="k7qm-x2ra-9vwe-tbn4", password="a new passphrase"),
    p.Sessions(id="s"),
    p.Revoke(device=2),
    p.Revoke(others=True, id="r"),
    p.ReportPlayer(name="bob", reason="insults in chat", game="g1", id=11),
    p.ListReports(id=12),
    p.ResolveReport(report=3, reason="warned him", id=13),
    p.RemoveChat(game="g1", line=3, reason="abuse", id=14),
    p.MutePlayer(name="bob", minutes=60, reason="insults", id=15),
    p.UnmutePlayer(name="bob"),
    p.KickPlayer(name="bob", reason="cool off"),
    p.BanPlayer(name="bob", reason="cheating", minutes=10080, id=16),
    p.UnbanPlayer(name="bob", reason="appeal granted"),
    p.PuzzleNext(id=11),
    p.PuzzleDaily(),
    p.PuzzleStreak(new=False),
    p.PuzzleAttempt(puzzle=7, moves=[21, 42], mode="streak", id=12),
    p.PuzzleHistory(limit=10),
    p.Tournaments(id=40),
    p.TournamentSub(tournament="T7kq2m9x", id=41),
    p.TournamentUnsub(tournament="T7kq2m9x"),
    p.TournamentJoin(tournament="T7kq2m9x", id=42),
    p.TournamentLeave(tournament="T7kq2m9x"),
    p.TournamentCreate(name="Evening arena", kind="arena", starts_at=1764180000.0, minutes=60,
                       clock="3+2", rated=True, computer_levels=[3], id=43),
    p.TournamentCreate(name="Sunday Swiss", kind="swiss", starts_at=0, rounds=5, clock="5+0"),
]

PUZZLE = p.PuzzleInfo(id=7, variant="4x4x4", moves=[0, 21, 42], notation="1a1 2b2 3c3",
                      to_move="o", kind="survive", length=1, horizon=3,
                      title="O to play and survive", rating=1400, plays=3, solves=1)

SERVER_EXAMPLES: list[p.ServerMessage] = [
    p.Welcome(name="ann", token="tok_1", rating=1500, games=["g1"], ref=1),
    p.LobbySnapshot(seeks=[SEEK], games=[SUMMARY], online=5, ref="r1"),
    p.LobbyDelta(seeks_added=[SEEK], seeks_removed=["s0"], games_removed=["g0"], online=6),
    p.Seeking(seek=SEEK, ref=2),
    p.Queued(variant="4x4x4", clock=CLOCK),
    p.PrivateCreated(code="Q7x9kLm2", variant="4x4", clock=None),
    p.LobbyDelta(players=[p.PlayerOnline(name="ann", rating=1500)]),
    p.ChallengeSent(challenge=CHALLENGE, ref=9),
    p.ChallengeReceived(challenge=CHALLENGE),
    p.ChallengeGone(challenge="c1", reason="offline"),
    p.GameState(
        id="g1",
        variant="4x4x4",
        clock=CLOCK,
        rated=True,
        seats=[p.SeatInfo(name="ann", rating=1500), p.SeatInfo(name="computer", ai=4)],
        moves=[0, 21],
        clocks=CLOCKS,
        status="over",
        version=9,
        you="x",
        draw_offer=None,
        rematch=["o"],
        end=END,
        spectators=2,
        chat=[CHAT],
    ),
    p.MovePlayed(game="g1", ply=2, cell=21, notation="2b2", side="o", clocks=CLOCKS, version=4),
    END,
    p.Offer(game="g1", kind="draw", by="o", version=5),
    p.Rematched(game="g1", rematch="g2", version=10),
    p.Presence(game="g1", version=6, side="o", online=False, claim_in=60.0),
    p.Watching(game="g1", count=3),
    CHAT,
    p.TakenBack(game="g1", ply=2, by="x", clocks=CLOCKS, version=7),
    p.Suggestion(game="g1", ply=2, cell=21, notation="2b2", ref=4),
    p.Pong(ref=-3),
    p.ComputerThinking(game="g1", ply=3, depth=6),
    p.EngineStatus(game="g1", state="preparing", progress=0.3, message="preparing the engine"),
    p.Ack(ref="m5"),
    p.Error(code="stale_move", message="stale", ref="m5"),
    p.PuzzleShown(puzzle=PUZZLE, mode="streak", rating=1510, streak=2, best_streak=5, ref=11),
    p.PuzzleResult(puzzle=7, verdict="wrong", solution=[63], rated=True, rating=1480,
                   rating_change=-30, ref=12),
    p.PuzzleHistoryList(attempts=[p.PuzzleTry(puzzle=7, title="O to play and survive",
                                              mode="next", solved=True, rated=True,
                                              rating_before=1500, rating_after=1532,
                                              at=1764150000.0)],
                        rating=1532, best_streak=5),
    p.Announce(text="The server restarts in 30 seconds.", restart_in=30.0),
    p.PasswordSet(recovery_codes=["k7qm-x2ra-9vwe-tbn4"], revoked=1, ref="p1"),
    p.Devices(devices=[p.DeviceInfo(id=1, label=None, created=1.0, last_seen=2.0,
                                    address="10.0.0.1", current=True)], revoked=0, ref="s"),
    p.PlayerGamesPage(
        player=p.PlayerProfile(name="ann", created=1.0, rating=1509, rd=290, games=1,
                               rated_games=1, wins=1, losses=0, draws=0),
        games=[p.PlayedGame(id="g1", variant="4x4", clock=None, rated=True, side="x", x="ann",
                            o="bob", x_ai=None, o_ai=None, status="over", result="1-0",
                            reason="line", moves=[0, 5, 1, 6, 2, 7, 3], created=2.0,
                            ended=3.0, rating=1500, rating_change=9)],
        next=None, ratings=[p.RatingPoint(at=3.0, rating=1509)], ref=31,
    ),
    p.GameReviewed(review=p.ReviewInfo(
        game="g1", variant="3x3x3", x="ann", o="bob", result="0-1", reason="line",
        start=p.VerdictInfo(verdict="win", plies=7, proved_by="book"),
        moves=[p.MoveReview(
            ply=1, side="x", cell=0, move="1a1",
            before=p.VerdictInfo(verdict="win", plies=7, proved_by="book"),
            after=p.VerdictInfo(verdict="loss", plies=8, proved_by="book"), kind="blunder",
            best=["2b2"], line=["2b2", "1a1", "3c3"])],
        summary={"x": {"blunder": 1}, "o": {}}, seconds=0.2, computed=1764160000.0), ref=23),
    p.ChatRemoved(game="g1", line=3),
    p.ReportQueue(reports=[p.ReportInfo(id=3, at=1795701514.2, by="ann", name="bob", game="g1",
                                        reason="insults in chat")], ref=12),
    p.TournamentList(tournaments=[TOURNEY], ref=40),
    p.TournamentState(
        info=TOURNEY,
        standings=[p.Standing(rank=1, name="ann", score=4, points=[2, 2], fire=True,
                              rating=1512, performance=2000, games=2, playing=True,
                              withdrawn=False, bot=False),
                   p.Standing(rank=2, name="bob", score=1.5, points=[2, 1], fire=False,
                              rating=1500, performance=1600, games=2, playing=False,
                              withdrawn=True, bot=True, buchholz=2.5, sonneborn_berger=1.0)],
        games=[p.TournamentGame(id="g1", x="ann", o="bob", round=None, result=None),
               p.TournamentGame(id="g2", x="bob", o="ann", round=2, result="1/2-1/2")],
        ref=41,
    ),
]


def test_the_examples_cover_every_message_type() -> None:
    assert {type(m) for m in CLIENT_EXAMPLES} == set(p.CLIENT_MESSAGES)
    assert {type(m) for m in SERVER_EXAMPLES} == set(p.SERVER_MESSAGES)


@pytest.mark.parametrize("message", CLIENT_EXAMPLES, ids=lambda m: type(m).__name__)
def test_client_messages_round_trip(message: p.ClientMessage) -> None:
    frame = p.encode(message)
    assert json.loads(frame)["t"] == type(message).__struct_config__.tag
    assert p.decode_client_message(frame) == message
    assert p.decode_client_message(frame.decode()) == message


@pytest.mark.parametrize("message", SERVER_EXAMPLES, ids=lambda m: type(m).__name__)
def test_server_messages_round_trip(message: p.ServerMessage) -> None:
    assert p.decode_server_message(p.encode(message)) == message


def test_a_minimal_frame_takes_the_defaults() -> None:
    seek = p.decode_client_message('{"t": "seek"}')
    assert seek == p.Seek(variant="4x4x4", clock=None, rated=False, colour="random", id=None)


def _create(**fields: object) -> bytes:
    """A ``tournament_create`` frame: an arena at 3+2 but for ``fields``."""
    frame = {"t": "tournament_create", "name": "Evening", "kind": "arena", "starts_at": 0,
             "clock": "3+2", **fields}
    return json.dumps(frame).encode()


BAD_FRAMES = [
    ("not json", b"{'t': 'ping'}", "bad_json"),
    ("trailing bytes", b'{"t": "ping"} {}', "bad_json"),
    ("not utf-8", b'{"t": "chat", "game": "g", "text": "\xff"}', "bad_utf8"),
    ("lone surrogate", '{"t": "chat", "game": "g", "text": "\ud800"}', "bad_utf8"),
    ("too large", b'{"t": "ping", "id": "' + b"a" * p.MAX_FRAME_BYTES + b'"}', "frame_too_large"),
    ("an array", b'[{"t": "ping"}]', "bad_message"),
    ("a number", b"42", "bad_message"),
    ("no type", b'{"game": "g1"}', "unknown_type"),
    ("unknown type", b'{"t": "teleport"}', "unknown_type"),
    ("type not a string", b'{"t": 3}', "unknown_type"),
    ("missing field", b'{"t": "move", "game": "g1", "cell": "1a1"}', "bad_message"),
    ("unknown field", b'{"t": "ping", "extra": 1}', "bad_message"),
    ("wrong type", b'{"t": "move", "game": "g1", "cell": "1a1", "ply": "0"}', "bad_message"),
    ("negative ply", b'{"t": "move", "game": "g1", "cell": "1a1", "ply": -1}', "bad_message"),
    ("id too long", b'{"t": "ping", "id": "' + b"i" * 65 + b'"}', "bad_message"),
    ("id a float", b'{"t": "ping", "id": 1.5}', "bad_message"),
    ("game id too long", b'{"t": "watch", "game": "' + b"g" * 33 + b'"}', "bad_message"),
    ("hello with nothing", b'{"t": "hello"}', "bad_message"),
    ("name too long", b'{"t": "hello", "name": "' + b"n" * 25 + b'"}', "bad_name"),
    ("name empty", b'{"t": "hello", "name": ""}', "bad_name"),
    ("name with space", b'{"t": "hello", "name": "ann b"}', "bad_name"),
    ("name with accent", '{"t": "hello", "name": "Zoë"}'.encode(), "bad_name"),
    ("bad token", b'{"t": "hello", "token": "a/b"}', "bad_token"),
    ("chat too long", b'{"t": "chat", "game": "g", "text": "' + b"c" * 301 + b'"}', "bad_chat"),
    ("chat empty", b'{"t": "chat", "game": "g", "text": ""}', "bad_chat"),
    ("chat blank", b'{"t": "chat", "game": "g", "text": "   "}', "bad_chat"),
    ("chat newline", b'{"t": "chat", "game": "g", "text": "a\\nb"}', "bad_chat"),
    ("chat escape", b'{"t": "chat", "game": "g", "text": "\\u001b[2J"}', "bad_chat"),
    ("chat zero width", b'{"t": "chat", "game": "g", "text": "a\\u200bb"}', "bad_chat"),
    ("chat bidi", b'{"t": "chat", "game": "g", "text": "a\\u202eb"}', "bad_chat"),
    ("cell word", b'{"t": "move", "game": "g", "cell": "hello", "ply": 0}', "bad_cell"),
    ("cell no row", b'{"t": "move", "game": "g", "cell": "1a", "ply": 0}', "bad_cell"),
    ("cell negative", b'{"t": "move", "game": "g", "cell": -1, "ply": 0}', "bad_cell"),
    ("cell huge", b'{"t": "move", "game": "g", "cell": 729, "ply": 0}', "bad_cell"),
    ("cell float", b'{"t": "move", "game": "g", "cell": 1.0, "ply": 0}', "bad_cell"),
    ("level 0", b'{"t": "play_ai", "level": 0}', "bad_level"),
    ("level 9", b'{"t": "play_ai", "level": 9}', "bad_level"),
    ("level text", b'{"t": "play_ai", "level": "3"}', "bad_level"),
    ("variant 5x5x5", b'{"t": "seek", "variant": "5x5x5"}', "bad_variant"),
    ("variant null", b'{"t": "quick", "variant": null}', "bad_variant"),
    ("clock zero", b'{"t": "seek", "clock": {"initial": 0, "increment": 0}}', "bad_clock"),
    ("clock 4 hours", b'{"t": "seek", "clock": {"initial": 14400, "increment": 0}}', "bad_clock"),
    ("clock half", b'{"t": "quick", "clock": {"initial": 60}}', "bad_clock"),
    (
        "clock extra",
        b'{"t": "quick", "clock": {"initial": 60, "increment": 0, "x": 1}}',
        "bad_clock",
    ),
    ("clock a number", b'{"t": "quick", "clock": 60}', "bad_clock"),
    ("tournament by id", b'{"t": "tournament_join", "id": "T1"}', "bad_message"),
    ("arena without minutes", _create(kind="arena", rounds=3), "bad_message"),
    ("swiss without rounds", _create(kind="swiss", minutes=60), "bad_message"),
    ("arena with rounds", _create(minutes=60, rounds=3), "bad_message"),
    ("tournament name blank", _create(minutes=60, name="  "), "bad_message"),
    ("tournament name escape", _create(minutes=60, name="a\u001bb"), "bad_message"),
    ("tournament clock spec", _create(minutes=60, clock={"initial": 60, "increment": 0}),
     "bad_clock"),
    ("tournament clock 0+5", _create(minutes=60, clock="0+5"), "bad_clock"),
    ("tournament clock 181+0", _create(minutes=60, clock="181+0"), "bad_clock"),
    ("tournament clock words", _create(minutes=60, clock="3 + 2"), "bad_clock"),
    ("tournament computer 9", _create(minutes=60, computer_levels=[9]), "bad_level"),
    ("tournament 31 rounds", _create(kind="swiss", rounds=31), "bad_message"),
]


@pytest.mark.parametrize(
    ("frame", "code"), [b[1:] for b in BAD_FRAMES], ids=[b[0] for b in BAD_FRAMES]
)
def test_bad_input_is_refused_with_a_stable_code(frame: bytes | str, code: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        p.decode_client_message(frame)
    assert refused.value.code == code
    assert code in set(p.ErrorCode)
    assert refused.value.message


def test_a_refusal_names_the_field() -> None:
    with pytest.raises(ProtocolError, match="`ply`"):
        p.decode_client_message(b'{"t": "move", "game": "g1", "cell": "1a1"}')
    with pytest.raises(ProtocolError, match=r"\$\.cell"):
        p.decode_client_message(b'{"t": "move", "game": "g1", "cell": "zz", "ply": 0}')


def test_constructing_a_bad_chat_in_python_is_refused_too() -> None:
    with pytest.raises(ProtocolError) as refused:
        p.Chat(game="g1", text="bell\a")
    assert refused.value.code == "bad_chat"


def test_errors_become_error_messages_with_ref_and_retry() -> None:
    message = p.error_message(ClaimTooEarly("you may claim in 12 s", retry_in=12.0), ref="c1")
    assert message == p.Error(
        code="claim_too_early", message="you may claim in 12 s", ref="c1", retry_in=12.0
    )
    assert p.with_ref(p.Pong(), 9) == p.Pong(ref=9)


def test_server_decoding_refuses_client_frames() -> None:
    with pytest.raises(ProtocolError) as refused:
        p.decode_server_message(p.encode(p.Hello(name="ann")))
    assert refused.value.code == "unknown_type"


DOC = pathlib.Path(__file__).parents[3] / "docs" / "protocol.md"


def test_every_message_and_code_is_documented() -> None:
    doc = DOC.read_text(encoding="utf-8")
    tags = {m.__struct_config__.tag for m in (*p.CLIENT_MESSAGES, *p.SERVER_MESSAGES)}
    missing = {t for t in tags if f'"t": "{t}"' not in doc}
    missing |= {c.value for c in p.ErrorCode if f"`{c.value}`" not in doc}
    assert not missing


def test_every_example_in_the_document_decodes() -> None:
    examples = re.findall(r"```json\n(.*?)\n```", DOC.read_text(encoding="utf-8"), re.S)
    seen = set()
    for example in examples:
        try:
            message: object = p.decode_client_message(example)
        except ProtocolError:
            message = p.decode_server_message(example)
        seen.add(type(message))
    assert seen == {*p.CLIENT_MESSAGES, *p.SERVER_MESSAGES}


def test_protocol_imports_no_asyncio_or_aiohttp() -> None:
    code = "import sys, server.protocol; print(sorted({'asyncio', 'aiohttp'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- nothing but ProtocolError escapes -----------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
tags = st.sampled_from([m.__struct_config__.tag for m in p.CLIENT_MESSAGES] + ["", "x"])
field_names = st.sampled_from(
    ["id", "name", "token", "game", "cell", "ply", "text", "level", "variant", "clock",
     "colour", "rated", "seek", "code", "since", "initial", "increment"]
)  # fmt: skip
near_messages = st.builds(
    lambda tag, fields: {"t": tag, **fields},
    tags,
    st.dictionaries(field_names, json_values, max_size=5),
)


def _decode_or_refuse(frame: bytes | str) -> None:
    try:
        message = p.decode_client_message(frame)
    except ProtocolError as error:
        assert error.code in set(p.ErrorCode)
    else:
        assert isinstance(message, p.CLIENT_MESSAGES)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_raise_only_protocol_errors(frame: bytes) -> None:
    _decode_or_refuse(frame)


@settings(max_examples=300, deadline=None)
@given(json_values | near_messages)
def test_random_json_raises_only_protocol_errors(value: object) -> None:
    try:
        frame = msgspec.json.encode(value)
    except (OverflowError, UnicodeEncodeError, msgspec.EncodeError):
        return  # not a value JSON can carry (lone surrogates, nan is fine)
    _decode_or_refuse(frame)
    _decode_or_refuse(frame.decode())


def test_a_refused_request_keeps_its_readable_id() -> None:
    with pytest.raises(ProtocolError) as caught:
        p.decode_client_message(b'{"t": "play_ai", "level": 9, "id": "q7"}')
    assert caught.value.code == "bad_level" and caught.value.ref == "q7"
    with pytest.raises(ProtocolError) as caught:
        p.decode_client_message(b'{"t": "dance", "id": 12}')
    assert caught.value.code == "unknown_type" and caught.value.ref == 12
    with pytest.raises(ProtocolError) as caught:
        p.decode_client_message(b'{"t": "dance", "id": {"no": 1}}')
    assert caught.value.ref is None


# Every identifier is matched whole: "$" in a searched pattern also matches before a final
# newline, which let "ann\n" in as a second "ann" (issue 13, item 1).
LOOK_ALIKES = ["\n", "\r", "\r\n", "\t", " ", "\u00a0", "\u200b", "\u0301"]
IDENTIFIER_FIELDS = [
    ("hello", "name", "ann", "bad_name"),
    ("hello", "token", "x0L1c4nB2vQ_ZpR8sT3uW5yA7dF9gH1jK3mN5pQ7r", "bad_token"),
    ("watch", "game", "pX3vQ9aL0cR2", "bad_message"),
    ("accept_seek", "seek", "s12", "bad_message"),
    ("private_join", "code", "K7QD-M2XA-PLVE-34TB", "bad_message"),
]


@pytest.mark.parametrize("suffix", LOOK_ALIKES, ids=[repr(s) for s in LOOK_ALIKES])
@pytest.mark.parametrize(
    ("t", "field", "good", "code"), IDENTIFIER_FIELDS, ids=[f[1] for f in IDENTIFIER_FIELDS]
)
def test_identifiers_are_matched_whole(t: str, field: str, good: str, code: str,
                                       suffix: str) -> None:
    assert getattr(p.decode_client_message(json.dumps({"t": t, field: good})), field) == good
    for bad in (good + suffix, suffix + good, good[:2] + suffix + good[2:]):
        with pytest.raises(ProtocolError) as refused:
            p.decode_client_message(json.dumps({"t": t, field: bad}))
        assert refused.value.code == code, repr(bad)


@pytest.mark.parametrize(
    "name", ["ann\n", "ａｎｎ", "аnn", "ann\u200d", "ⅰann", "ann\u0000", "Ann\x0b"]
)
def test_look_alike_names_are_refused(name: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        p.decode_client_message(json.dumps({"t": "hello", "name": name}))
    assert refused.value.code == "bad_name"


@pytest.mark.parametrize("cell", ["2b3\n", "b3\n", "\n2b3", "2b3 ", "２b3"])
def test_cells_in_notation_are_matched_whole(cell: str) -> None:
    frame = json.dumps({"t": "move", "game": "g1", "cell": cell, "ply": 0})
    with pytest.raises(ProtocolError) as refused:
        p.decode_client_message(frame)
    assert refused.value.code == "bad_cell"


@given(st.text(max_size=30))
@settings(max_examples=300)
def test_a_name_is_accepted_only_when_it_is_wholly_ascii_word_characters(name: str) -> None:
    frame = json.dumps({"t": "hello", "name": name})
    if re.fullmatch(r"[A-Za-z0-9_-]{1,24}", name):
        assert p.decode_client_message(frame) == p.Hello(name=name)
    else:
        with pytest.raises(ProtocolError):
            p.decode_client_message(frame)


SECURITY = DOC.parent / "security.md"


def test_the_documents_state_what_the_code_does() -> None:
    """Issue 13, items 5, 7 and 9: one truth in protocol.md, security.md and the code."""
    from server.game.matchmaking import new_private_code
    from server.game.ratings import (
        DEFAULT_RATING,
        DEFAULT_RD,
        DEFAULT_VOLATILITY,
        Rating,
        rate_game,
    )

    doc, security = DOC.read_text(encoding="utf-8"), SECURITY.read_text(encoding="utf-8")
    heartbeat, pong = f"**{p.HEARTBEAT_SECONDS} s**", f"**{p.PONG_WAIT_SECONDS:g} s**"
    assert heartbeat in doc and pong in doc and "two intervals" not in doc
    assert heartbeat in security and pong in security
    assert "Sent once" not in security and "are lost" not in security
    codes = re.findall(r'"t": "private(?:_join)?", "code": "([^"]+)"', doc)
    shape = re.sub(r"[A-Z2-7]", "A", new_private_code())
    assert codes and all(re.sub(r"[A-Z2-7]", "A", c) == shape for c in codes)
    new = Rating(DEFAULT_RATING, DEFAULT_RD, DEFAULT_VOLATILITY)
    swing = round(rate_game(new, new, 1.0)[0].rating - DEFAULT_RATING)
    assert f"±{swing} points" in doc
    assert f"**{p.RATE_LIMIT_BURST}** frames" in doc
    assert f"**{p.RATE_LIMIT_PER_SECOND} frames per second**" in doc


def test_a_refusal_meant_for_the_host_names_nothing_of_the_server(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A database's error text (its path, its host, its SQL) goes to the log; the client is
    told what happened in words of its own (issue 28, faults seen from outside)."""
    from server.errors import StoreError
    from server.protocol import wire

    monkeypatch.setattr(wire, "_quiet_until", {})  # no earlier refusal in this process counts
    secret = "cannot write to the database /srv/qubic/q.db: database or disk is full"
    with caplog.at_level("WARNING", logger="server.errors"):
        sent = p.error_message(StoreError(secret), ref=7)
    assert sent.code == "store_unavailable" and sent.ref == 7
    assert "/srv" not in sent.message and "database or disk" not in sent.message
    assert sent.message == p.PUBLIC_MESSAGES["store_unavailable"]
    assert secret in caplog.text
    refused = p.error_message(StoreError("the name 'ann' is taken", code="name_taken"))
    assert refused.message == "the name 'ann' is taken"  # meant for the player: kept


def test_one_warning_per_storage_outage_and_a_retry_in(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk refuses every move until it has room: the host reads one warning for the
    run (the rest at debug level, /metrics counts them), again after a quiet spell, and each
    client is told when to try again (issue 39)."""
    from server.errors import StoreError
    from server.protocol import wire

    clock = [1000.0]
    monkeypatch.setattr(wire, "_quiet_until", {})
    monkeypatch.setattr(wire.time, "monotonic", lambda: clock[0])
    with caplog.at_level("DEBUG", logger="server.errors"):
        for _ in range(20):
            sent = p.error_message(StoreError("cannot write: database or disk is full"))
            assert sent.retry_in == wire.STORE_RETRY_IN > 0
            clock[0] += 1.0  # a refused move a second
        clock[0] += wire.LOG_QUIET  # the outage over; the next one is warned of again
        p.error_message(StoreError("cannot write: database or disk is full"))
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 2
    assert len([r for r in caplog.records if r.levelname == "DEBUG"]) == 19
    claim = p.error_message(ClaimTooEarly("you may claim in 12 s", retry_in=12.0))
    assert claim.retry_in == 12.0  # an error's own retry_in is kept


def test_a_server_message_past_the_clients_frame_limit_decodes() -> None:
    """The 8 KiB limit bounds what clients send; a long game's review or a page of games
    from the server is larger (issue 38 item 4: the terminal client refused them)."""
    from server.protocol.codes import MAX_FRAME_BYTES
    from server.protocol.wire import decode_client_message, decode_server_message

    said = "a" * MAX_FRAME_BYTES
    told = decode_server_message(json.dumps({"t": "error", "code": "bad_chat", "message": said}))
    assert told.message == said  # type: ignore[union-attr]
    with pytest.raises(ProtocolError) as refused:
        decode_client_message(json.dumps({"t": "chat", "game": "pX3vQ9aL0cR2", "text": said}))
    assert refused.value.code == p.ErrorCode.FRAME_TOO_LARGE
