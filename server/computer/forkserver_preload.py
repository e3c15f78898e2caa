"""Imported by multiprocessing's fork server only (named as its preload by ``ComputerPool``).

Importing it there ties the fork server's life to the server that started it (see
``server.computer.lifeline``) and loads the engine's modules once, so every worker forked
later starts with them already imported. Nothing else should import this module.
"""

from server.computer.lifeline import die_with_parent

die_with_parent()

import engine.players  # noqa: E402,F401  (loaded once here, inherited by every worker)
