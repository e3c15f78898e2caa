"""The origin's side of the requests a cluster node forwarded: each is kept until its answer
comes, so that one whose owner died (or whose answer the bus lost) is answered ``unavailable``
after a deadline, as Colyseus's ``remoteRoomCall`` rejects."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import msgspec

from server.protocol import RequestId


@dataclass(frozen=True)
class Asked:
    """A session's request sent to another node, not answered yet."""

    ref: RequestId
    game: str
    watch: bool  # a watch: the game opened pending here closes if it fails
    node: str  # where it was sent
    sent: float  # on the event loop's clock


class _Ref(msgspec.Struct):
    ref: RequestId | None = None  # in a reply


_ref_of = msgspec.json.Decoder(_Ref).decode


class Awaiting:
    """The origin's side of forwarded requests (Colyseus's ``remoteRoomCall`` rejects after
    a deadline the same way): each request of a session here that went to another node is
    kept until a reply to it (a frame with its ``ref``) reaches its session, so that one
    whose answer never comes (its owner died, or the bus lost it) can be answered with
    ``unavailable``. Requests without an ``id`` are not kept: nothing could match them."""

    def __init__(self) -> None:
        self._asked: dict[int, dict[RequestId, Asked]] = {}

    def __len__(self) -> int:
        return sum(len(asked) for asked in self._asked.values())

    def sent(self, session: int, asked: Asked) -> None:
        self._asked.setdefault(session, {})[asked.ref] = asked

    def answered(self, session: int, frame: bytes) -> None:
        """``frame`` goes to ``session``: if it replies to a request of it, that one is done."""
        asked = self._asked.get(session)
        if not asked:
            return
        try:
            ref = _ref_of(frame).ref
        except msgspec.DecodeError:
            return
        if ref is not None and asked.pop(ref, None) is not None and not asked:
            del self._asked[session]

    def moved(self, game: str, node: str) -> None:
        """``game``'s owner is ``node`` now: the requests about it sent to another node may
        never be answered (that node passed them on to an owner since deposed, or lost them),
        so they wait on nobody: answered ``unavailable`` at the short deadline if no answer
        comes by then."""
        for by_ref in self._asked.values():
            for ref, asked in by_ref.items():
                if asked.game == game and asked.node not in (node, ""):
                    by_ref[ref] = replace(asked, node="")

    def take(self, session: int, ref: RequestId | None) -> Asked | None:
        """The request ``ref`` of ``session``, no longer waited for (its sending failed)."""
        return None if ref is None else self._pop(session, ref)

    def expired(self, now: float, deadline: float, gone: Callable[[str], bool]
                ) -> list[tuple[int, Asked]]:
        """The requests given up now, oldest first: those without an answer ``deadline``
        seconds after they were sent whose node is ``gone`` (or the bus is), and any after
        three times ``deadline`` (their node lives, yet the request or its answer was lost)."""
        late = sorted(((session, asked) for session, by_ref in self._asked.items()
                       for asked in by_ref.values() if now - asked.sent >= deadline),
                      key=lambda item: item[1].sent)
        expired = [(session, asked) for session, asked in late
                   if gone(asked.node) or now - asked.sent >= 3 * deadline]
        for session, asked in expired:
            self._pop(session, asked.ref)
        return expired

    def _pop(self, session: int, ref: RequestId) -> Asked | None:
        by_ref = self._asked.get(session)
        if by_ref is None:
            return None
        asked = by_ref.pop(ref, None)
        if not by_ref:
            del self._asked[session]
        return asked
