"""``python -m referee``: the ``referee`` command (``referee_cli``).

An entry point, not part of the library: nothing imports it, so its import of
the command's package is no arrow back up (``tests/test_layering.py``)."""

from referee_cli.main import main

main()
