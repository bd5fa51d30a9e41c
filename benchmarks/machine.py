"""What the machine did besides the benchmark: stolen and idle core time (Linux /proc/stat).

On a virtual machine the hypervisor may run other guests on our cores
("steal"); rates measured in such minutes are low for reasons outside the
code under test, so the benchmarks print it beside their figures.
"""

from __future__ import annotations

import os


def cpu_ticks() -> tuple[float, float]:
    """(idle, steal) seconds so far, summed over this process's cores; zeros without /proc/stat."""
    mine = {f"cpu{c}" for c in os.sched_getaffinity(0)} if hasattr(os, "sched_getaffinity") else set()
    idle = steal = 0
    try:
        with open("/proc/stat") as f:
            for line in f:
                name, *fields = line.split()
                if name in mine:
                    idle += int(fields[3]) + int(fields[4])
                    steal += int(fields[7]) if len(fields) > 7 else 0
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return idle / tick, steal / tick
