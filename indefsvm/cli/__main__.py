"""``python -m indefsvm.cli ...``: the ``indefsvm`` command."""

from indefsvm.cli import main

raise SystemExit(main())
