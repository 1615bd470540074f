#!/usr/bin/python3
"""Slow clients flooding `iowatch serve` from one or several addresses leave scrapes served.

1. One address: with only a global cap, 1,000 slow-header clients reconnecting every 2 s took 58
   of 60 legitimate scrapes to 503. A daemon with web.max_connections 32 (one address may hold
   24) and web.read_timeout 2s; for 4 s, 200 connections from 127.0.0.2 send the start of a
   request head and never finish it, each reconnecting as soon as the server closes it (its 503,
   or the read timeout); meanwhile a scraper from 127.0.0.1 GETs /metrics on a fresh connection
   every 0.1 s. Every scrape must be 200, the flood must have been refused
   (iowatch_http_rejected_connections_total > 0), and each scrape's
   iowatch_http_active_connections at most 25: the flood's share of 24 and the scrape itself.
2. Several addresses: 2 x 60 slow connections (127.0.0.2, 127.0.0.3), then 16 x 4
   (127.0.0.2 .. 127.0.0.17), against the default web.max_connections 64 and read_timeout 10s:
   together they hold every slot, each address within its share, for longer than the test. The
   per-address share alone left 0 of 58 scrapes answered; a scrape now takes the slot of the
   oldest connection that has not sent its request, from the address holding the most. Every
   scrape must be 200, and iowatch_http_evicted_connections_total must count them.

Usage: serve_client_share.py IOWATCH_BINARY
"""
import http.client
import selectors
import socket
import sys
import threading
import time

import daemon

CONFIG_SHARE = "web:\n  read_timeout: 2s\n  max_connections: 32\nprobes:\n  enabled: false\n"
CONFIG_DEFAULT = "probes:\n  enabled: false\n"
SECONDS, SHARE = 4.0, 24
HEAD = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "


def flood(port, sources, until, stats):
    """sources: [(address, count)]: that many slow-header connections from each address, each
    replaced when the server closes it, until `until` (time.monotonic())."""
    sel = selectors.DefaultSelector()

    def open_one(source):
        s = socket.socket()
        s.bind((source, 0))
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, [False, source])
        stats["opened"] += 1

    try:
        for source, count in sources:
            for _ in range(count):
                open_one(source)
        while time.monotonic() < until:
            for key, events in sel.select(0.05):
                s, data = key.fileobj, key.data
                if events & selectors.EVENT_WRITE and not data[0]:
                    try:
                        s.send(HEAD)  # connected: the head starts, and never ends
                    except OSError:
                        pass
                    data[0] = True
                    sel.modify(s, selectors.EVENT_READ, data)
                elif events & selectors.EVENT_READ:  # the server answered 503 or closed it
                    try:
                        if s.recv(4096).startswith(b"HTTP/1.1 503"):
                            stats["refused"] += 1
                        else:
                            stats["closed"] += 1
                    except OSError:
                        stats["closed"] += 1
                    sel.unregister(s)
                    s.close()
                    open_one(data[1])
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


def scrapes_during_flood(port, sources, seconds):
    """Floods from `sources` for `seconds`, scraping every 0.1 s after the first second.
    Returns (statuses, active connections seen by the scrapes, flood stats)."""
    stats = {"opened": 0, "refused": 0, "closed": 0}
    until = time.monotonic() + seconds + 1
    flooder = threading.Thread(target=flood, args=(port, sources, until, stats))
    flooder.start()
    statuses, active = [], []
    try:
        time.sleep(1)  # the flood takes what it can
        while time.monotonic() < until - 0.2:
            status, open_now = scrape(port)
            statuses.append(status)
            if open_now is not None:
                active.append(open_now)
            time.sleep(0.1)
    finally:
        flooder.join()
    return statuses, active, stats


def one_address(binary, r):
    with daemon.Daemon(binary, config=CONFIG_SHARE) as d:
        statuses, active, stats = scrapes_during_flood(d.port, [("127.0.0.2", 200)], SECONDS)
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


def several_addresses(binary, r):
    scenarios = [("2 addresses x 60", [(f"127.0.0.{2 + a}", 60) for a in range(2)]),
                 ("16 addresses x 4", [(f"127.0.0.{2 + a}", 4) for a in range(16)])]
    for name, sources in scenarios:
        with daemon.Daemon(binary, config=CONFIG_DEFAULT) as d:
            statuses, active, stats = scrapes_during_flood(d.port, sources, 3.0)
            answered = sum(s == 200 for s in statuses)
            print(f"     {name}: {answered} of {len(statuses)} scrapes answered 200; "
                  f"{stats['opened']} slow connections opened, {stats['refused']} answered 503, "
                  f"{stats['closed']} closed; active during the scrapes: "
                  f"{min(active, default=0):.0f} .. {max(active, default=0):.0f}")
            bad = [s for s in statuses if s != 200]
            r.check(len(statuses) > 10 and not bad,
                    f"{name} slow connections holding every slot: all {len(statuses)} scrapes 200",
                    f"{len(bad)} not 200: {bad[:5]}")
            r.check(active and max(active) <= 64, "and the cap of 64 held", f"active {active}")
            evicted = daemon.values(d.scrape(), "iowatch_http_evicted_connections_total")
            r.check(evicted and evicted[0] > 0,
                    f"the scrapes took waiting connections' slots ({evicted})")


def main():
    daemon.exit_on_sigterm()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    r = daemon.Results()
    one_address(sys.argv[1], r)
    several_addresses(sys.argv[1], r)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
