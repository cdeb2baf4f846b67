"""`python -m m2t`: the command line."""

from m2t.cli import main

raise SystemExit(main())
