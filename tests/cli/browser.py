"""Headless Chromium for the tests of pages moor writes (the atlas): a file:// URL loaded
with no network, its DOM after the scripts ran, a screenshot. Chromium is required where
`MOOR_REQUIRE_CHROMIUM=1` (CI installs it: .ci/run); elsewhere a test without it is skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--window-size=1400,900",
    # No network at all: any request the page made would fail, not be fetched.
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
)


def need_chromium() -> str:
    if Path(CHROMIUM).is_file():
        return CHROMIUM
    if os.environ.get("MOOR_REQUIRE_CHROMIUM") == "1":
        pytest.fail(f"{CHROMIUM} is missing (CI installs it: tests/cli/install_chromium.sh)")
    pytest.skip("headless Chromium is not installed (tests/cli/install_chromium.sh)")


def _run(url: str, *extra: str, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    chromium = need_chromium()
    with tempfile.TemporaryDirectory(prefix="moor-chromium-") as profile:
        return subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={profile}", *extra, url],
            capture_output=True,
            timeout=timeout,
            check=True,
        )


def dump_dom(url: str) -> str:
    """The page's DOM once its scripts ran (Chromium's `--dump-dom`)."""
    return _run(url, "--dump-dom").stdout.decode("utf-8")


def screenshot(url: str, png: Path) -> None:
    png.parent.mkdir(parents=True, exist_ok=True)
    _run(url, f"--screenshot={png}")
    assert png.is_file() and png.stat().st_size > 0, f"no screenshot at {png}"
