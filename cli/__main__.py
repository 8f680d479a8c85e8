"""``python -m drasat.cli``: the same as the ``drasat`` command."""

from .main import main

main()
