"""The offline HTML page of a launch, opened in a real headless browser (Chromium from the
system packages): it renders with no network, and the screenshot shows the page, not a blank or
an error page. Skips when no Chromium is installed (Debian: ``apt-get install chromium``)."""
from __future__ import annotations

import shutil
import subprocess
import numpy as np
import pytest

from tests.simulator.test_report_html import launch

BROWSER = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium on PATH: install it "
                                "(Debian: apt-get install chromium) to render the HTML report")


def test_html_report_renders_in_chromium(tmp_path):
    page = tmp_path / "report.html"
    launch(trace=True).save_html(page)
    shot = tmp_path / "shot.png"
    subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=800,600", f"--screenshot={shot}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    image = pytest.importorskip("PIL.Image", reason="Pillow (with matplotlib) reads the PNG")
    pixels = np.asarray(image.open(shot).convert("RGB"))
    assert pixels.shape == (600, 800, 3)
    ink = (pixels.min(axis=2) < 128).mean()          # dark pixels: text, bars, the timeline
    colours = len(np.unique(pixels.reshape(-1, 3)[::7], axis=0))
    assert 0.005 < ink < 0.6, ink                    # neither blank nor an all-dark error page
    assert colours > 8, colours                      # the coloured busy bars and timeline drew
