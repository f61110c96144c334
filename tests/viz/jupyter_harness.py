"""Start a throwaway JupyterLab server and a headless Chromium for the browser tests."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"]

# user settings that make the notebook UI test-friendly: every cell stays in the DOM, no news popups
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                        "checkForUpdates": False},
}


def browser_skip_reason():
    """Why the browser tests cannot run here, or None."""
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} not found (run make test as root, or apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright for Python is not installed (pip install playwright)"
    if shutil.which("jupyter", path=str(Path(sys.executable).parent)) is None:
        return "jupyter is not installed in this environment"
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_settings(settings_dir):
    for rel, value in SETTINGS.items():
        path = Path(settings_dir) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    # the same override as an app-level overrides.json, for setups that read that instead
    (Path(settings_dir) / "overrides.json").write_text(json.dumps(
        {"@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}}))


class JupyterServer:
    """``jupyter lab`` on a free localhost port, token off, rooted in ``root``. Also serves Notebook 7."""

    def __init__(self, root, home):
        self.root, self.home = Path(root), Path(home)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self, timeout=90):
        settings = self.home / "settings"
        write_settings(settings)
        env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings),
                   JUPYTERLAB_WORKSPACES_DIR=str(self.home / "workspaces"),
                   JUPYTER_CONFIG_DIR=str(self.home / "config"), JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
                   PYTHONPATH=str(Path(__file__).resolve().parents[2]))
        cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={self.port}",
               "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
               "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={self.root}",
               "--LabApp.news_url=None", "--ServerApp.port_retries=0"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        self.log = open(self.home / "server.log", "w")
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("jupyter lab exited:\n" + (self.home / "server.log").read_text()[-3000:])
            try:
                with urllib.request.urlopen(self.url + "/api/status", timeout=2):
                    return self
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("jupyter lab did not start:\n" + (self.home / "server.log").read_text()[-3000:])

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if getattr(self, "log", None):
            self.log.close()
