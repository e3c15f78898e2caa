"""``python -m qubic_cli``: the same as the ``qubic`` command."""

import sys

from qubic_cli.main import main

sys.exit(main())
