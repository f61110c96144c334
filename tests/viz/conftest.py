"""Fixtures for the browser tests: a JupyterLab server and a headless Chromium (skipped if absent)."""
from pathlib import Path

import pytest

from jupyter_harness import CHROMIUM, CHROMIUM_ARGS, JupyterServer, browser_skip_reason

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def chromium():
    reason = browser_skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory, chromium):
    root = tmp_path_factory.mktemp("nbroot")
    server = JupyterServer(root, tmp_path_factory.mktemp("jupyterhome")).start()
    yield server
    server.stop()
