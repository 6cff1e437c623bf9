"""Progress of an autotune or a sweep: configs done / total and the best cycles so far.

Nothing is shown for the first second (short runs stay quiet). Then: a tqdm bar when tqdm is
installed (``tqdm.auto``: a widget in a notebook), else a rich bar when rich is installed and
stderr is a terminal, else plain lines on stderr at most every 2 seconds (a log, CI, a
redirected run). ``ASCENDC_PY_PROGRESS=0`` turns it off, ``=1`` shows it from the start.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Optional

DELAY_SECONDS = 1.0
PLAIN_EVERY_SECONDS = 2.0


class Progress:
    """``update(best)`` after each item (``best``: the fewest cycles so far, or None);
    ``close()`` at the end."""

    def __init__(self, total: int, what: str, enabled: Optional[bool] = None):
        env = os.environ.get("ASCENDC_PY_PROGRESS", "")
        if enabled is None:
            enabled = env != "0"
        self.enabled = enabled
        self.delay = 0.0 if env == "1" else DELAY_SECONDS
        self.total = total
        self.what = what
        self.done = 0
        self.best = None
        self.t0 = time.perf_counter()
        self._bar = None
        self._kind = None
        self._last_plain = 0.0

    def _start(self) -> None:
        try:
            from tqdm.auto import tqdm
            self._bar = tqdm(total=self.total, desc=self.what, unit="config", file=sys.stderr,
                             initial=self.done, leave=False)
            self._kind = "tqdm"
            return
        except ImportError:
            pass
        if sys.stderr.isatty():
            try:
                from rich.progress import Progress as RichProgress
                self._bar = RichProgress(transient=True)
                self._bar.start()
                self._task = self._bar.add_task(self.what, total=self.total,
                                                completed=self.done)
                self._kind = "rich"
                return
            except ImportError:
                pass
        self._kind = "plain"

    def update(self, best=None, n: int = 1) -> None:
        self.done += n
        if best is not None:
            self.best = best if self.best is None else min(self.best, best)
        if not self.enabled:
            return
        now = time.perf_counter()
        if self._kind is None:
            if now - self.t0 < self.delay:
                return
            self._start()
        best_text = f"best {self.best:,} cycles" if self.best is not None else "no result yet"
        if self._kind == "tqdm":
            self._bar.set_postfix_str(best_text, refresh=False)
            self._bar.update(self.done - self._bar.n)
        elif self._kind == "rich":
            self._bar.update(self._task, completed=self.done,
                             description=f"{self.what} ({best_text})")
        elif now - self._last_plain >= PLAIN_EVERY_SECONDS or self.done == self.total:
            self._last_plain = now
            print(f"{self.what}: {self.done}/{self.total} configs, {best_text}, "
                  f"{now - self.t0:.1f} s", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._kind == "tqdm":
            self._bar.close()
        elif self._kind == "rich":
            self._bar.stop()
        self._kind = "closed" if self._kind else None
        self.enabled = False


__all__ = ["Progress"]
