"""The running build's version: set once, in pyproject.toml, and read from the installed
package's metadata (a checkout that was never installed says ``0+unknown``).

The distribution is ``qubic-game`` (the public package index's ``qubic`` is another project);
the command it installs is ``qubic``."""

from __future__ import annotations

from importlib import metadata

DISTRIBUTION = "qubic-game"

try:
    VERSION = metadata.version(DISTRIBUTION)
except metadata.PackageNotFoundError:
    VERSION = "0+unknown"


def install_extra(extra: str = "cluster") -> str:
    """How to install an extra: from a release's wheel or from a checkout, never by a bare
    name (docs/operations.md, *Install*)."""
    wheel = f"qubic_game-{VERSION}-py3-none-any.whl"
    return f"pip install '{wheel}[{extra}]' (a release's wheel) or '.[{extra}]' (a checkout)"
