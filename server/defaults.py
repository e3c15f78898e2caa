"""The defaults several parts share, each defined once here (the options that set them say so)."""

GRACE = 60.0
"""Seconds a dropped player keeps the seat before the opponent may claim the game."""

LEASE_TTL = 3.0
"""Seconds a cluster node's leases live unrenewed: a dead node's games move about this late."""
