#!/usr/bin/python3
"""`iowatch serve` signals: SIGHUP reloads (good and bad files), SIGTERM under load.

1. SIGHUP after the config file changed sampling.window: the new window shows
   in iowatch_sampling_window_seconds, iowatch_config_last_reload_successful
   is 1 and the success timestamp moves.
2. SIGHUP with an invalid file: the daemon keeps running and serving the old
   config, reload_successful is 0, the timestamp stays, stderr names the
   file:line:column; a later good file brings 1 back.
3. SIGTERM while 20 threads scrape /metrics over keep-alive connections (and two
   more connections sit idle, one with half a request head): every
   response that started arrives whole (status line, Content-Length bytes or
   every chunk up to the last, trailing newline, a parseable exposition); refused or reset connections
   before a status line are fine. The daemon exits 0 within 2 s of the signal.

Usage: serve_signals.py IOWATCH_BINARY
"""
import http.client
import os
import signal
import socket
import sys
import threading
import time
import traceback

import daemon

CLIENTS = 20


def config(window, extra=""):
    return f"sampling:\n  interval: 500ms\n  window: {window}\n{extra}"


def reload_state(d):
    s = d.scrape()
    return (daemon.values(s, "iowatch_sampling_window_seconds")[0],
            daemon.values(s, "iowatch_config_last_reload_successful")[0],
            daemon.values(s, "iowatch_config_last_reload_success_timestamp_seconds")[0])


def wait_for(d, predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        state = reload_state(d)
        if predicate(state) or time.monotonic() > deadline:
            return state
        time.sleep(0.1)


def check_reloads(r, d):
    window, ok, ts0 = reload_state(d)
    r.check(window == 60 and ok == 1, f"start: window {window} s, reload_successful {ok}")
    time.sleep(0.2)
    d.write_config(config("30s"))
    d.send(signal.SIGHUP)
    window, ok, ts1 = wait_for(d, lambda s: s[0] == 30)
    r.check(window == 30 and ok == 1 and ts1 > ts0,
            f"SIGHUP, good file: window 30 s applied, reload_successful 1, timestamp moved "
            f"by {ts1 - ts0:.2f} s", f"window {window} ok {ok} ts {ts0} -> {ts1}")

    d.write_config(config("30s", "  windw: 10s\n"))  # unknown key at line 4, column 3
    d.send(signal.SIGHUP)
    window, ok, ts2 = wait_for(d, lambda s: s[1] == 0)
    r.check(ok == 0 and window == 30 and ts2 == ts1,
            "SIGHUP, invalid file: reload_successful 0, window still 30 s, timestamp kept",
            f"window {window} ok {ok} ts {ts1} -> {ts2}")
    status = d.get("/healthz")[0]
    r.check(d.alive() and status == 200, "SIGHUP, invalid file: still running and healthy")
    where = f"{d.config_file}:4:3"
    r.check(where in d.stderr(), f"SIGHUP, invalid file: stderr names iowatch.yaml:4:3",
            d.stderr()[-1500:])

    time.sleep(0.2)
    d.write_config(config("45s"))
    d.send(signal.SIGHUP)
    window, ok, ts3 = wait_for(d, lambda s: s[1] == 1 and s[0] == 45)
    r.check(window == 45 and ok == 1 and ts3 > ts2,
            "SIGHUP, good file again: window 45 s, reload_successful back to 1, timestamp moved",
            f"window {window} ok {ok} ts {ts2} -> {ts3}")


class Scraper(threading.Thread):
    """Scrapes until told to stop or the server refuses; classifies every attempt."""

    def __init__(self, port, stop):
        super().__init__(daemon=True)
        self.port, self.stop = port, stop
        self.complete = self.not_started = 0
        self.after_signal = 0
        self.signal_time = None
        self.broken = []  # responses that started but did not arrive whole

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        while not self.stop.is_set():
            try:
                conn.request("GET", "/metrics")
                response = conn.getresponse()
            except ConnectionRefusedError:
                return  # the listener is closed: the daemon is stopping
            except http.client.BadStatusLine as e:
                if not isinstance(e, http.client.RemoteDisconnected) and str(e.line).strip("'"):
                    self.broken.append(f"partial status line {e.line!r}")
                self.not_started += 1
                conn.close()
                continue
            except OSError:  # reset or closed before any byte of an answer
                self.not_started += 1
                conn.close()
                continue
            try:
                body = response.read()
                length = int(response.getheader("Content-Length", "-1"))
                # /metrics is streamed, chunked: http.client raises IncompleteRead if it is cut.
                chunked = response.getheader("Transfer-Encoding") == "chunked"
                problem = (f"status {response.status}" if response.status != 200 else
                           f"{len(body)} bytes, Content-Length {length}"
                           if len(body) != length and not chunked else
                           "no trailing newline" if not body.endswith(b"\n") else None)
                if problem is None:
                    daemon.parse_metrics(body.decode())
            except (OSError, http.client.HTTPException, ValueError) as e:
                problem = f"{type(e).__name__}: {e}"
            if problem:
                self.broken.append(problem)
                conn.close()
            else:
                self.complete += 1
                self.after_signal += self.signal_time is not None


def check_sigterm_under_load(r, d):
    stop = threading.Event()
    scrapers = [Scraper(d.port, stop) for _ in range(CLIENTS)]
    # A connection with no request yet and one with half a head: no response is in flight on
    # them, so they must not hold the exit past 2 s (at worst the 1.5 s grace closes them).
    idle = [socket.create_connection(("127.0.0.1", d.port)) for _ in range(2)]
    idle[1].sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    for s in scrapers:
        s.start()
    try:
        deadline = time.monotonic() + 10
        while sum(s.complete for s in scrapers) < 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        before = sum(s.complete for s in scrapers)
        for s in scrapers:
            s.signal_time = time.monotonic()
        code, seconds = d.stop(signal.SIGTERM, timeout=10)
    finally:
        stop.set()
        for s in scrapers:
            s.join(15)
        for s in idle:
            s.close()
    broken = [p for s in scrapers for p in s.broken]
    after = sum(s.after_signal for s in scrapers)
    not_started = sum(s.not_started for s in scrapers)
    print(f"     {before} complete responses before SIGTERM, {after} completed after it, "
          f"{not_started} attempts refused or reset before a status line")
    r.check(before >= 200, f"{CLIENTS} clients were scraping when SIGTERM came ({before} responses)")
    r.check(not broken, "no response that started was truncated or malformed",
            f"{len(broken)}: {broken[:5]}")
    r.check(code == 0, f"exit code 0 after SIGTERM", f"exit {code}\n{d.stderr()[-1500:]}")
    r.check(code is not None and seconds < 2.0, f"exited {seconds:.2f} s after SIGTERM (< 2 s)")
    r.check(not any(s.is_alive() for s in scrapers), "every client thread finished")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    daemon.exit_on_sigterm()
    r = daemon.Results()
    try:
        with daemon.Daemon(sys.argv[1], config=config("60s")) as d:
            check_reloads(r, d)
            check_sigterm_under_load(r, d)
    except Exception:  # noqa: BLE001 - reported as a failed check; Daemon cleaned up
        r.check(False, "no unexpected error", traceback.format_exc())
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
