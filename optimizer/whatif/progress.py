"""Progress per finished scenario on stderr: a bar redrawn in place on a terminal; elsewhere one line per
scenario only when asked (--verbose), so that logs and pipes stay quiet."""
from __future__ import annotations

import sys
import time
from typing import Any, TextIO

WIDTH = 28


class Progress:
    def __init__(self, total: int, *, stream: TextIO | None = None, lines: bool = False) -> None:
        self.total, self.done, self.errors = total, 0, 0
        self.stream = stream or sys.stderr
        self.bar = self.stream.isatty()
        self.lines = lines
        self.started = time.perf_counter()

    def __call__(self, row: dict[str, Any]) -> None:
        self.done += 1
        self.errors += row.get("status") == "ERROR"
        name = (f"{row['cluster']}: " if row.get("cluster") else "") + str(row.get("scenario"))
        if self.bar:
            filled = WIDTH * self.done // max(1, self.total)
            errors = f", {self.errors} error(s)" if self.errors else ""
            line = (f"\rwhatif [{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total}{errors} "
                    f"{time.perf_counter() - self.started:.0f}s  {name}"[:160])
            self.stream.write(line.ljust(100))
            self.stream.flush()
        elif self.lines:
            self.stream.write(f"whatif: {self.done}/{self.total} {name}: {row.get('status')} "
                              f"({row.get('wall_seconds')}s)\n")

    def close(self) -> None:
        if self.bar and self.done:
            self.stream.write("\n")
            self.stream.flush()
