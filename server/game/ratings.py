"""Glicko-2 ratings, as in Glickman's "Example of the Glicko-2 system" (2013).

A rated game is its own rating period: both players are updated as soon as it ends, as on
lichess. With periods that short the system constant ``TAU`` matters less than in monthly
tournament play; 0.5 sits in the middle of the 0.3-1.2 range Glickman recommends and keeps a
lucky streak from moving the volatility far. RD never grows past ``MAX_RD`` (the RD of a new
player). It needs no floor: each period first widens RD by the volatility, so a regular player's
RD settles near 60 and an established rating still moves by several points per game.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_RATING = 1500.0
DEFAULT_RD = 350.0
DEFAULT_VOLATILITY = 0.06
TAU = 0.5
MAX_RD = 350.0

SCALE = 173.7178  # 400 / ln(10): converts between the Glicko and the Glicko-2 scale
_EPSILON = 1e-6  # convergence tolerance of the volatility iteration, as in the paper


@dataclass(frozen=True)
class Rating:
    """A player's Glicko-2 rating on the Glicko scale: rating, deviation (RD), volatility."""

    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_RD
    volatility: float = DEFAULT_VOLATILITY


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def expected_score(player: Rating, opponent: Rating) -> float:
    """The score ``player`` is expected to make against ``opponent`` (0 to 1)."""
    mu, mu_j = (player.rating - DEFAULT_RATING) / SCALE, (opponent.rating - DEFAULT_RATING) / SCALE
    return 1.0 / (1.0 + math.exp(-_g(opponent.rd / SCALE) * (mu - mu_j)))


def _new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5 of the paper: the Illinois variant of regula falsi on f(x) = 0."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        spread = phi * phi + v + ex
        return ex * (delta * delta - spread) / (2.0 * spread * spread) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > _EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update_rating(
    player: Rating, results: Iterable[tuple[float, float, float]], tau: float = TAU
) -> Rating:
    """``player`` after one rating period of ``(opponent rating, opponent RD, score)`` results.

    Scores are 1 for a win, 0.5 for a draw, 0 for a loss. With no results only the RD grows,
    as time without games makes a rating less certain.
    """
    mu = (player.rating - DEFAULT_RATING) / SCALE
    phi = player.rd / SCALE
    sigma = player.volatility
    games = [((r - DEFAULT_RATING) / SCALE, rd / SCALE, s) for r, rd, s in results]
    if not games:
        grown = math.sqrt(phi * phi + sigma * sigma) * SCALE
        return Rating(player.rating, min(grown, MAX_RD), sigma)
    v_inverse = 0.0
    improvement = 0.0
    for mu_j, phi_j, score in games:
        g = _g(phi_j)
        expected = 1.0 / (1.0 + math.exp(-g * (mu - mu_j)))
        v_inverse += g * g * expected * (1.0 - expected)
        improvement += g * (score - expected)
    v = 1.0 / v_inverse
    delta = v * improvement
    new_sigma = _new_volatility(sigma, phi, v, delta, tau)
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * improvement
    return Rating(new_mu * SCALE + DEFAULT_RATING, min(new_phi * SCALE, MAX_RD), new_sigma)


def rate_game(x: Rating, o: Rating, x_score: float, tau: float = TAU) -> tuple[Rating, Rating]:
    """Both players after one game in which X scored ``x_score`` (1, 0.5 or 0)."""
    new_x = update_rating(x, [(o.rating, o.rd, x_score)], tau)
    new_o = update_rating(o, [(x.rating, x.rd, 1.0 - x_score)], tau)
    return new_x, new_o
