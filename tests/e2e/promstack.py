"""The Debian Prometheus server, Alertmanager and VictoriaMetrics (server, vmagent, vmalert) as
the e2e tests run them: on loopback, each in a temporary directory, killed with the test.
deploy/prometheus/scrape.yml is the scrape config, adapted to the daemons' addresses and a 1 s
scrape; a webhook receiver here collects what Alertmanager notifies.
"""
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
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


def victoria_metrics(work, name):
    """The Debian `victoria-metrics` single-node server, data under work/name-data. Queries see
    samples 1 s after they arrive (30 s by default) and nothing is cached, so rules chained
    through it advance every evaluation."""
    return Server(work, name, "", lambda port: [
        "victoria-metrics", f"-storageDataPath={work}/{name}-data",
        f"-httpListenAddr=127.0.0.1:{port}", "-retentionPeriod=1d", "-search.latencyOffset=1s",
        # A series stays visible 5 s past its last sample, as Prometheus's 5 min lookback does
        # past a 15 s scrape: on a busy machine a recording rule's write-back can come a second
        # or two late, and a chained rule that found nothing then reset every alert's `for:`.
        "-search.minStalenessInterval=5s",
        "-search.disableCache", "-loggerLevel=WARN"])


def vmagent(work, name, scrape_text, remote_write_port):
    """vmagent scraping with `scrape_text` (a Prometheus scrape config) and remote-writing to the
    VictoriaMetrics server on `remote_write_port`."""
    return Server(work, name, scrape_text, lambda port: [
        "vmagent", f"-promscrape.config={work}/{name}.yml",
        f"-remoteWrite.url=http://127.0.0.1:{remote_write_port}/api/v1/write",
        f"-remoteWrite.tmpDataPath={work}/{name}-data", f"-httpListenAddr=127.0.0.1:{port}",
        "-remoteWrite.flushInterval=1s", "-loggerLevel=WARN"])


def vmalert(work, name, rule_files, store_port, alertmanager_port, labels, interval="1s"):
    """vmalert evaluating `rule_files` (paths) every `interval` against the VictoriaMetrics
    server on `store_port`, writing recording rules' results and alert state back to it,
    notifying the Alertmanager on `alertmanager_port`; `labels` {name: value} are added to
    every alert (-external.label)."""
    store = f"http://127.0.0.1:{store_port}"
    return Server(work, name, "", lambda port: [
        "vmalert", *[f"-rule={f}" for f in rule_files], f"-datasource.url={store}",
        f"-remoteWrite.url={store}", f"-remoteRead.url={store}",
        f"-notifier.url=http://127.0.0.1:{alertmanager_port}",
        f"-evaluationInterval={interval}", "-remoteWrite.flushInterval=1s",
        f"-httpListenAddr=127.0.0.1:{port}",
        *[f"-external.label={k}={v}" for k, v in labels.items()], "-loggerLevel=WARN"])


def copy_rules(deploy, work, *names):
    for name in names:
        shutil.copy(os.path.join(deploy, "prometheus", name), work)


class Receiver:
    """A webhook receiver on loopback: every notification Alertmanager POSTs, with the
    monotonic time it arrived."""

    def __init__(self):
        self.notifications, self.lock = [], threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with outer.lock:
                    outer.notifications.append((time.monotonic(), json.loads(body)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def alerts(self, alertname, status, since, **labels):
        """(arrival, alert) of each alert named so with that status (and those labels)
        notified after `since`."""
        want = {"alertname": alertname, **labels}
        with self.lock:
            return [(at, a) for at, n in self.notifications if at >= since
                    for a in n.get("alerts", [])
                    if a["status"] == status
                    and all(a["labels"].get(k) == v for k, v in want.items())]

    def wait(self, alertname, status, since, timeout, **labels):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.alerts(alertname, status, since, **labels)
            if found:
                return found[0]
            time.sleep(0.1)
        return None

    def close(self):
        self.server.shutdown()


def alertmanager_config(deploy, receiver_port):
    with open(os.path.join(deploy, "alertmanager", "alertmanager.yml")) as f:
        text = f.read()
    text = text.replace("http://127.0.0.1:5001/iowatch", f"http://127.0.0.1:{receiver_port}/")
    text = re.sub(r"group_wait: \S+", "group_wait: 1s", text)
    return re.sub(r"group_interval: \S+", "group_interval: 1s", text)
