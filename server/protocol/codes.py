"""The protocol's fixed numbers (limits, version, variants) and its stable error codes."""

from __future__ import annotations

import enum

# -- transport limits (the app enforces them; docs/protocol.md states them) -------------------

MAX_FRAME_BYTES = 8 * 1024
RATE_LIMIT_PER_SECOND = 10  # sustained client frames per second ...
RATE_LIMIT_BURST = 30  # ... with this many allowed at once; beyond: close 1008
HEARTBEAT_SECONDS = 20  # a websocket ping after this long without a frame from the peer ...
PONG_WAIT_SECONDS = HEARTBEAT_SECONDS / 2  # ... then dropped if no pong comes within this
CHAT_BURST = 8  # chat lines one player may say at once, over all their sockets and nodes ...
CHAT_PER_SECOND = 0.5  # ... then one every 2 s; beyond: chat_too_fast (the socket stays)
CLOSE_POLICY_VIOLATION = 1008
PROTOCOL_VERSION = 1
VARIANTS = ("4x4x4", "3x3x3", "4x4")
PLAYERS_SHOWN = 200  # the lobby lists at most this many players online, the first by name


class ErrorCode(enum.StrEnum):
    """Every stable code the server sends in an ``error`` message (see docs/protocol.md)."""

    # transport and decoding
    FRAME_TOO_LARGE = "frame_too_large"
    BINARY_FRAME = "binary_frame"
    BAD_UTF8 = "bad_utf8"
    BAD_JSON = "bad_json"
    UNKNOWN_TYPE = "unknown_type"
    BAD_MESSAGE = "bad_message"
    BAD_NAME = "bad_name"
    BAD_TOKEN = "bad_token"
    BAD_CHAT = "bad_chat"
    BAD_CELL = "bad_cell"
    BAD_LEVEL = "bad_level"
    BAD_VARIANT = "bad_variant"
    BAD_CLOCK = "bad_clock"
    RATE_LIMITED = "rate_limited"
    TOO_MANY_CONNECTIONS = "too_many_connections"
    # session
    NOT_AUTHENTICATED = "not_authenticated"
    ALREADY_AUTHENTICATED = "already_authenticated"
    NAME_TAKEN = "name_taken"
    NAME_RESERVED = "name_reserved"
    NO_SUCH_PLAYER = "no_such_player"
    TOO_MANY_PLAYERS = "too_many_players"
    # lobby and matchmaking
    NO_SUCH_SEEK = "no_such_seek"
    OWN_SEEK = "own_seek"
    TOO_MANY_SEEKS = "too_many_seeks"
    TOO_MANY_COMPUTER_GAMES = "too_many_computer_games"
    ALREADY_QUEUED = "already_queued"
    NOT_QUEUED = "not_queued"
    NO_SUCH_CODE = "no_such_code"
    AI_UNAVAILABLE = "ai_unavailable"
    OWN_CHALLENGE = "own_challenge"
    ALREADY_CHALLENGED = "already_challenged"
    TOO_MANY_CHALLENGES = "too_many_challenges"
    NO_SUCH_CHALLENGE = "no_such_challenge"
    # game rooms
    NO_SUCH_GAME = "no_such_game"
    NOT_SEATED = "not_seated"
    SPECTATOR = "spectator"
    NOT_YOUR_TURN = "not_your_turn"
    STALE_MOVE = "stale_move"
    ILLEGAL_MOVE = "illegal_move"
    OCCUPIED = "occupied"
    GAME_OVER = "game_over"
    GAME_NOT_OVER = "game_not_over"
    NO_DRAW_OFFER = "no_draw_offer"
    ALREADY_OFFERED = "already_offered"
    TOO_LATE_TO_ABORT = "too_late_to_abort"
    CLAIM_TOO_EARLY = "claim_too_early"
    OPPONENT_PRESENT = "opponent_present"
    SPECTATOR_CHAT_OFF = "spectator_chat_off"
    CHAT_TOO_FAST = "chat_too_fast"
    # accounts: passwords, devices, recovery (none says whether a name has a password)
    BAD_PASSWORD = "bad_password"
    BAD_CREDENTIALS = "bad_credentials"
    BAD_RECOVERY_CODE = "bad_recovery_code"
    TOKEN_REVOKED = "token_revoked"
    TOO_MANY_ATTEMPTS = "too_many_attempts"
    NO_SUCH_DEVICE = "no_such_device"
    # puzzles
    NO_SUCH_PUZZLE = "no_such_puzzle"
    NO_PUZZLES = "no_puzzles"
    # generic
    NOT_ALLOWED = "not_allowed"
    STORE_UNAVAILABLE = "store_unavailable"
    SHUTTING_DOWN = "shutting_down"
    UNAVAILABLE = "unavailable"
    SOLVER_BUSY = "solver_busy"
    INTERNAL = "internal"
    # the host's levers (docs/admin.md)
    BANNED = "banned"
    MUTED = "muted"
    KICKED = "kicked"
    NOT_MODERATOR = "not_moderator"
    NOT_ADMIN = "not_admin"
    NO_SUCH_REPORT = "no_such_report"
    TOO_MANY_REPORTS = "too_many_reports"
    # tournaments (docs/tournaments.md)
    NO_SUCH_TOURNAMENT = "no_such_tournament"
    TOURNAMENT_OVER = "tournament_over"
    TOURNAMENT_STARTED = "tournament_started"
    TOURNAMENT_FULL = "tournament_full"
