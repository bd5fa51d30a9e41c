"""Tournaments: round robins with duplicate deals, run in parallel, resumable.

Pure parts (no trio, no I/O beyond reading a TOML file):

* ``config``    pydantic models of the tournament file and their resolution
                against the game registry (``resolve`` → ``Tournament``);
* ``schedule``  pairings, arrangements, game ids and seeds;
* ``results``   one line of ``results.jsonl`` as a value, and reading the file
                back after a crash;
* ``stats``     Wilson and Student-t intervals;
* ``standings`` per-entrant statistics, ratings, cross table, paired deals.

Trio execution lives in ``runner``; the output directory, its secret and the
results file in ``output``; atomic, fsync'ed writes in ``durable``; the
standings.json / .csv files in ``standings_files``; rich tables in ``report``.
"""
