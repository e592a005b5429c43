"""``python -m autotrans``: the command line (see autotrans.cli)."""
from .cli import main

raise SystemExit(main())
