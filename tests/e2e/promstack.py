"""The Debian Prometheus server and Alertmanager as the e2e tests run them: on loopback, each in
a temporary directory, killed with the test. deploy/prometheus/scrape.yml is the scrape config,
adapted to the daemon's address and a 1 s scrape.
"""
import json
import os
import shutil
import signal
import subprocess
import urllib.parse
import urllib.request

import daemon


def api(port, path, **params):
    url = f"http://127.0.0.1:{port}{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(url, timeout=30) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"{path} {params}: {body}")
    return body["data"]


def query(port, expr):
    return api(port, "/api/v1/query", query=expr)["result"]


def scrape_config(deploy, instance):
    """deploy/prometheus/scrape.yml aimed at `instance`, every second."""
    with open(os.path.join(deploy, "prometheus", "scrape.yml")) as f:
        scrape = f.read()
    return scrape.replace("localhost:9860", instance).replace(
        "scrape_interval: 15s", "scrape_interval: 1s").replace(
        "scrape_timeout: 10s", "scrape_timeout: 1s")


class Server:
    """A server binary with its config and a data directory under `work`, on a free loopback
    port; stopped with SIGTERM (then SIGKILL) at the end. log() is what it printed."""

    def __init__(self, work, name, config_text, argv):
        self.work, self.name, self.argv = work, name, argv
        self.config = os.path.join(work, f"{name}.yml")
        with open(self.config, "w") as f:
            f.write(config_text)
        self.port, self.proc = daemon.free_port(), None

    def __enter__(self):
        self.log_path = os.path.join(self.work, f"{self.name}.log")
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(self.argv(self.port), stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL,
                                         preexec_fn=daemon._die_with_parent)
        return self

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self):
        with open(self.log_path) as f:
            return f.read()


def prometheus(work, config_text):
    """The Debian `prometheus` server on `config_text` (work/prometheus.yml)."""
    return Server(work, "prometheus", config_text, lambda port: [
        "prometheus", f"--config.file={work}/prometheus.yml",
        f"--storage.tsdb.path={work}/prometheus-data", f"--web.listen-address=127.0.0.1:{port}"])


def alertmanager(work, config_text):
    """The Debian `prometheus-alertmanager` on `config_text` (work/alertmanager.yml), clustering
    off."""
    return Server(work, "alertmanager", config_text, lambda port: [
        "prometheus-alertmanager", f"--config.file={work}/alertmanager.yml",
        f"--storage.path={work}/alertmanager-data", f"--web.listen-address=127.0.0.1:{port}",
        "--cluster.listen-address="])


def copy_rules(deploy, work, *names):
    for name in names:
        shutil.copy(os.path.join(deploy, "prometheus", name), work)
