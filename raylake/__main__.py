"""``python -m raylake``: the ``raylake`` command."""
import sys

from raylake.cli import main

sys.exit(main())
