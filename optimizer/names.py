"""Names the command line offers as choices before any solver is imported (importing optimizer.rebalance
pulls in OR-Tools, SciPy and pandas: about a second of CPU at every start, for every command)."""
from __future__ import annotations

REBALANCE_GOALS = ("fix", "spread", "pack", "prefs")
REBALANCE_DRAIN = "drain"
REBALANCE_EMITS = ("plan", "evictions", "script")  # what `podplan rebalance --emit` prints
