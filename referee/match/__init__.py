"""The match layer: bot channels (a bot process in its sandbox, Trio; in tests, fakes),
each seat's time bank, the runner that moves values between an engine and the bots (the one
place faults become results), and the record."""
