#!/usr/bin/python3
"""One client address flooding `iowatch serve` with slow request heads leaves the others served.

Issue 26 item 27: with only a global cap, 1,000 slow-header clients reconnecting every 2 s took
58 of 60 legitimate scrapes to 503. Here, a daemon with web.max_connections 32 (one address may
hold 24) and web.read_timeout 2s; for 4 s, 200 connections from 127.0.0.2 send the start of a
request head and never finish it, each reconnecting as soon as the server closes it (its 503, or
the read timeout); meanwhile a scraper from 127.0.0.1 GETs /metrics on a fresh connection every
0.1 s. Every scrape must be 200, the flood must have been refused
(iowatch_http_rejected_connections_total > 0), and each scrape's iowatch_http_active_connections
at most 25: the flood's share of 24 and the scrape itself.

Usage: serve_client_share.py IOWATCH_BINARY
"""
import http.client
import selectors
import socket
import sys
import threading
import time

import daemon

CONFIG = "web:\n  read_timeout: 2s\n  max_connections: 32\nprobes:\n  enabled: false\n"
FLOOD, SECONDS, SHARE = 200, 4.0, 24
HEAD = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "


def flood(port, until, stats):
    """FLOOD slow-header connections from 127.0.0.2, each replaced when the server closes it."""
    sel = selectors.DefaultSelector()

    def open_one():
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, [False])
        stats["opened"] += 1

    try:
        for _ in range(FLOOD):
            open_one()
        while time.monotonic() < until:
            for key, events in sel.select(0.05):
                s, sent = key.fileobj, key.data
                if events & selectors.EVENT_WRITE and not sent[0]:
                    try:
                        s.send(HEAD)  # connected: the head starts, and never ends
                    except OSError:
                        pass
                    sent[0] = True
                    sel.modify(s, selectors.EVENT_READ, sent)
                elif events & selectors.EVENT_READ:  # the server answered 503 or closed it
                    try:
                        if s.recv(4096).startswith(b"HTTP/1.1 503"):
                            stats["refused"] += 1
                    except OSError:
                        pass
                    sel.unregister(s)
                    s.close()
                    open_one()
    finally:
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        sel.close()


def scrape(port):
    """(status, the daemon's iowatch_http_active_connections) of one scrape from 127.0.0.1."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5,
                                      source_address=("127.0.0.1", 0))
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        body = response.read().decode()
        if response.status != 200:
            return response.status, None
        active = daemon.values(daemon.parse_metrics(body), "iowatch_http_active_connections")
        return 200, active[0] if active else None
    except (OSError, http.client.HTTPException) as e:
        return f"{type(e).__name__}: {e}", None
    finally:
        conn.close()


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    r = daemon.Results()
    with daemon.Daemon(sys.argv[1], config=CONFIG) as d:
        stats = {"opened": 0, "refused": 0}
        until = time.monotonic() + SECONDS + 1
        flooder = threading.Thread(target=flood, args=(d.port, until, stats))
        flooder.start()
        time.sleep(1)  # the flood takes what it can
        statuses, active = [], []
        while time.monotonic() < until - 0.2:
            status, open_now = scrape(d.port)
            statuses.append(status)
            if open_now is not None:
                active.append(open_now)
            time.sleep(0.1)
        flooder.join()
        print(f"     flood: {stats['opened']} connections opened from 127.0.0.2, "
              f"{stats['refused']} answered 503; the daemon's active connections during the "
              f"scrapes: {min(active, default=0):.0f} .. {max(active, default=0):.0f}")
        bad = [s for s in statuses if s != 200]
        r.check(len(statuses) > 20 and not bad,
                f"{len(statuses)} scrapes from 127.0.0.1 during the flood: all 200",
                f"{len(bad)} not 200: {bad[:5]}")
        r.check(stats["refused"] > 0 and active and max(active) <= SHARE + 1,
                f"the flood was refused beyond its share ({SHARE} of 32)",
                f"{stats['refused']} refused, active {active}")
        rejected = daemon.values(d.scrape(), "iowatch_http_rejected_connections_total")
        r.check(rejected and rejected[0] > 0, f"and counted ({rejected})")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
