"""The match layer: bot processes (Trio), the runner that moves values between
an engine and the bots (the one place faults become results), and the record."""
