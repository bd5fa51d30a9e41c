"""Command-line options that more than one command takes, declared once."""

from __future__ import annotations

from typing import Annotated

import typer

# The resource caps a bot runs under, the same options wherever bots are started (play, ask).
MemoryOption = Annotated[int, typer.Option(
    help="Memory cap per bot in MB: address space of each process and resident memory of the "
    "bot with its children; 0 = none.")]
CpuOption = Annotated[int, typer.Option(help="CPU-time cap per bot process in seconds; 0 = none.")]
ProcessesOption = Annotated[int, typer.Option(
    help="Most live processes a bot may run, its descendants included; 0 = none.")]
OpenFilesOption = Annotated[int, typer.Option(help="Open-file cap per bot process; 0 = none.")]
