"""Reusable widgets of the terminal client; each carries its own DEFAULT_CSS."""
