"""Progress for every long run: tqdm's bar at a terminal, a plain line every tenth of the work elsewhere.

Why: tqdm draws nothing when standard error is no terminal (a log file, ``nohup``, a pipe, CI), so a run of
minutes or hours said nothing until it ended, and a person piping the demo through ``tee`` waited three silent
minutes. A line per tenth is enough to see that a run lives and how fast it goes, and few enough for a log.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from tqdm import tqdm


class LineProgress:
    """The part of tqdm's interface the runs use (``update``, ``set_postfix``, ``n``, ``total``, ``close``),
    printing ``desc: n of total unit (p%), rate/s, postfix`` each time another tenth is done, and at the end."""

    def __init__(self, total: float, desc: str, unit: str, initial: float = 0, file: TextIO | None = None):
        self.total, self.desc, self.unit, self.n = total, desc, unit, initial
        self.file = file or sys.stderr
        self.start, self.start_n = time.perf_counter(), initial
        self.shown = self._tenth()
        self.postfix = ""

    def _tenth(self) -> int:
        return int(10 * self.n / self.total) if self.total else 0

    def update(self, amount: float = 1) -> None:
        self.n += amount
        if self._tenth() > self.shown:
            self.shown = self._tenth()
            self._line()

    def set_postfix(self, **values: Any) -> None:
        self.postfix = ", ".join(f"{k}={v}" for k, v in values.items())

    def _line(self) -> None:
        rate = (self.n - self.start_n) / max(time.perf_counter() - self.start, 1e-9)
        share = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        print(f"{self.desc}: {self.n:,.0f} of {self.total:,.0f} {self.unit}{share}, {rate:,.0f} {self.unit}/s"
              + (f", {self.postfix}" if self.postfix else ""), file=self.file, flush=True)

    def close(self) -> None:
        pass


def progress_meter(total: float, desc: str, unit: str, enabled: bool = True, initial: float = 0,
             file: TextIO | None = None, **bar: Any) -> Any:
    """A tqdm bar when ``file`` (standard error by default) is a terminal, else a :class:`LineProgress`; a
    disabled tqdm when ``enabled`` is false."""
    out = file or sys.stderr
    if not enabled:
        return tqdm(total=total, disable=True)
    if not getattr(out, "isatty", lambda: False)():
        return LineProgress(total, desc, unit, initial, out)
    return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=out, dynamic_ncols=True, **bar)
