"""The invariants the simulation checks, each a named checker, and the ones known to fail.

A checker's name is ``family.what``; a violation names its checker. ``KNOWN_BUGS`` lists the
checkers that fail on the code of today because of an open item of issue 36 (or 37): a run
reports their violations but does not fail on them. A name with ``@cluster`` (or ``@embedded``)
is known on that backend only. After merging a fix, take its checker out
of ``KNOWN_BUGS`` (the suite's small run then holds the fix); a known checker that no longer
fails is reported as such, so a stale entry is seen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CHECKERS: dict[str, str] = {
    # versions: every client's versioned stream converges (docs/protocol.md, "Versions")
    "versions.catchup_closes_gap": "a watch with since closes the gap it was sent for in one round",
    "versions.converge": "after the server goes quiet no client holds a gap it cannot close",
    "versions.storm": "no client sends more than 3 catch-up frames for one game in one step",
    "versions.events_agree": "a move event applied at its version is at the next ply",
    "versions.view_matches_store": "a converged client's moves are the stored moves",
    # moves: every acknowledged move is stored once at its ply
    "moves.acked_stored": "every acknowledged move is stored at its ply with its cell",
    "moves.once_at_ply": "a game's stored plies are 1..n, each once",
    "moves.none_after_end": "no move is stored after the position was over",
    "moves.no_won_board_active": "no game whose stored board is won is still active",
    "moves.legal_move_acked": "a legal move on a converged view of one's turn is acknowledged",
    # levers: a lever reaches every socket and every token, within a second
    "levers.ban_closes_sockets": "a ban closes every socket of the player (banned, 1008)",
    "levers.ban_refuses_hello": "a banned player's token is refused at hello with banned",
    "levers.ban_reaches_http": "a banned player's token gets no 200 on a route that takes it",
    "levers.banned_login_oracle": "a banned player's login answers alike to right and wrong "
                                  "passwords, and gives no session",
    "levers.banned_recover": "a banned player's recovery code does not open a session",
    "levers.unban_admits": "after unban the player's token opens a session again",
    "levers.kick_closes_sockets": "a kick closes every socket of the player (kicked, 1008)",
    "levers.mute_holds": "a muted player's chat is refused with muted, on every socket",
    "levers.unmute_holds": "after unmute the player's chat is accepted",
    "levers.revoke_closes_sockets": "a logged-out device's sockets are closed (token_revoked, "
                                    "4001) on every node",
    "levers.revoked_token_refused": "a logged-out device's token is refused at hello and on HTTP",
    "levers.revoked_socket_grants_nothing": "a logged-out device's socket still open answers no "
                                            "account request",
    "levers.rename_holds": "a rename closes the player's sockets and the token returns under "
                           "the new name",
    "levers.delete_holds": "a deleted player's sockets close and the token opens nothing",
    "levers.end_game_holds": "end-game ends the game on every screen that has it open",
    "levers.moderator_not_over_admin": "a moderator cannot remove an admin's chat line",
    "accounts.password_normalised": "a password typed in another Unicode form logs in",
    # records: games, reports and ratings belong to a player, not a name
    "records.renamed_name_clean": "a newcomer under a renamed player's old name owns nothing",
    "records.deleted_name_clean": "a deleted player's games' name cannot be taken with them",
    "records.seats_by_player": "a client is told it sits in a game only where its player sits",
    "records.sanctions_by_player": "a newcomer under a muted player's old name is not muted",
    "records.levers_by_player": "a lever on a player (a rename's kick) does not reach a "
                                "newcomer who took their old name",
    "records.report_names": "a report names its players as they are now named",
    "records.names_fold_separators": "names differing only by _ or - are the same name",
    "records.reserved_names": "a reserved word with a suffix or separators is reserved",
    "records.private_game_unlisted": "an ongoing private game is not listed in a profile",
    # tournaments: an arena's pairing and standings beside the levers
    "tournaments.paired_entrants": "an arena pairs only players who joined it and have not "
                                   "left it, been banned or been deleted",
    "tournaments.standings_names": "an arena's standings name each player as they are "
                                   "called now",
    "tournaments.own_line": "a follower's own line (me) is their own",
    "tournaments.bots_paired_connected": "an arena pairs a bot only while its event stream "
                                         "is open (or closed a moment ago)",
    # bots: the bot API beside the levers
    "bots.upgrade": "an account with no rated game becomes a bot",
    "bots.challenge_reaches_stream": "a challenge to a bot shows on its open event stream",
    "bots.stream_ends_on_lever": "a ban, kick, deletion or password reset ends the bot's "
                                 "event stream within a second, on any node",
    # what each client is told of the others
    "chat.audiences": "a players' line reaches the players only, a spectators' line the "
                      "spectators only; staff watching get both",
    "presence.as_told": "after the server goes quiet, each client holds each seat online "
                        "exactly when that player has the game open on a socket",
    "presence.watchers_as_told": "after the server goes quiet, each client following a game "
                                 "holds as many watching as players have it open unseated",
    "presence.claim_agrees": "a claim is refused opponent_present only while the opponent has "
                             "the game open, and never wins against one who has",
    "lobby.lists_public_games_only": "the lobby never lists a private or a computer game",
    # refusals: documented codes, connections kept or closed as documented
    "refusals.documented_code": "every error code is in codes.py and docs/protocol.md",
    "refusals.no_internal": "no request reaches a traceback (internal)",
    "refusals.expected_code": "a wrong request gets the code docs/protocol.md gives it",
    "refusals.close_as_documented": "the server closes a socket only as documented",
    "refusals.stays_open": "a refusal documented to keep the socket open keeps it open",
    "refusals.deep_json": "JSON nested deep is refused with a code and the socket stays open",
    "refusals.invisible_chat": "a chat line of only invisible characters is refused (bad_chat)",
    "refusals.ping_flood": "a flood of websocket pings is cut off by the rate limit",
    "refusals.invisible_password": "a password of invisible characters is refused",
    "refusals.remove_chat_unknown_game": "remove_chat of a game that does not exist: "
                                         "no_such_game",
    "refusals.connect": "a client can connect",
}

ON_EVERY_FRAME = frozenset({  # judged by the client on every frame; counted when they fail
    "refusals.documented_code", "refusals.no_internal", "refusals.close_as_documented",
    "refusals.connect", "versions.events_agree", "versions.catchup_closes_gap"})

KNOWN_BUGS: dict[str, str] = {}


def known(checker: str, mode: str) -> str | None:
    """Why ``checker`` is known to fail in ``mode`` (``embedded`` or ``cluster``), or None."""
    return KNOWN_BUGS.get(f"{checker}@{mode}") or KNOWN_BUGS.get(checker)


@dataclass
class Violation:
    checker: str
    step: int
    detail: str

    def line(self) -> str:
        return f"  step {self.step:>4}  {self.checker}: {self.detail}"


def documented_codes(root: Path) -> frozenset[str]:
    """The error codes of ``server/protocol/codes.py`` that docs/protocol.md's table names."""
    from server.protocol.codes import ErrorCode

    table = (root / "docs" / "protocol.md").read_text(encoding="utf-8")
    in_docs = set(re.findall(r"^\| `([a-z0-9_]+)` \|", table, flags=re.MULTILINE))
    return frozenset(code.value for code in ErrorCode if code.value in in_docs)


def undocumented_codes(root: Path) -> set[str]:
    """Codes the server may send that docs/protocol.md's table does not name."""
    from server.protocol.codes import ErrorCode

    return {code.value for code in ErrorCode} - documented_codes(root)
