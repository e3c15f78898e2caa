"""The running build's version: set once, in pyproject.toml, and read from the installed
package's metadata (a checkout that was never installed says ``0+unknown``)."""

from __future__ import annotations

from importlib import metadata

try:
    VERSION = metadata.version("qubic")
except metadata.PackageNotFoundError:
    VERSION = "0+unknown"
