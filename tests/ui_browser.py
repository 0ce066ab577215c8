"""A real headless Chromium for the page's end-to-end tests: Debian's chromium and chromium-driver, driven by
selenium; never a downloaded browser. Where one is missing the tests skip, saying which (fail under CI)."""

from __future__ import annotations

import os
import shutil
import tempfile

from needs import unavailable

CHROMIUM = os.environ.get("HIERPLAN_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("HIERPLAN_CHROMEDRIVER", "/usr/bin/chromedriver")
# What works as root in a container: no sandbox, no GPU, nothing that talks to the network on its own.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,1000", "--hide-scrollbars")


def start_chromium():
    """(driver, profile dir); skips (or fails under HIERPLAN_REQUIRE_SERVERS=1) when a piece is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unavailable("the browser tests need selenium (pip install selenium)")
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            unavailable(f"no {path}: apt-get install {package}")
    profile = tempfile.mkdtemp(prefix="hierplan-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    try:
        driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    except Exception as exc:  # noqa: BLE001 - a browser that does not start is a missing browser here
        shutil.rmtree(profile, ignore_errors=True)
        unavailable(f"chromium did not start: {' '.join(str(exc).split())[:300]}")
    driver.set_page_load_timeout(30)
    return driver, profile


def stop_chromium(driver, profile: str) -> None:
    try:
        driver.quit()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
