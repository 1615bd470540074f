#!/usr/bin/python3
"""`iowatch serve` under load, slowloris, oversized heads and the connection limit.

1. --clients (50) threads scrape /metrics over keep-alive connections for
   --seconds (40): zero errors (status 200, a whole body: Content-Length bytes
   or every chunk, trailing newline); prints requests/s and p50/p99 latency.
2. A third of the way in, --idle (30) connections open: two thirds send
   nothing, one third trickles an endless request head a byte every 200 ms.
   The server (web.read_timeout 2s, max_connections 256) must close each one
   between 1.5 s and read_timeout + 1.5 s after it opened, count them in
   iowatch_http_timeouts_total, and meanwhile the normal scrapes must keep
   p99 < 1 s with no error.
3. A request head with a 64 KiB header gets 431.
4. A second daemon with max_connections 4: with 4 idle connections opened (one
   address holds 3 of them, its share), a fifth gets 503 at once instead of
   hanging; once they close, scrapes work.

Usage: serve_load.py IOWATCH_BINARY [--seconds 40] [--clients 50] [--idle 30]
"""
import argparse
import http.client
import selectors
import socket
import sys
import threading
import time
import traceback

import daemon

# Probes off: this measures the HTTP server and the sampler, and a probe's
# file fill and I/O (the bundled jobs) would land in its latency figures.
NO_PROBES = "probes:\n  enabled: false\n"
CONFIG = "web:\n  read_timeout: 2s\n  max_connections: 256\nsampling:\n  interval: 1s\n" + NO_PROBES
SMALL = "web:\n  read_timeout: 5s\n  max_connections: 4\n" + NO_PROBES
READ_TIMEOUT, MARGIN = 2.0, 1.5


def percentile(sorted_values, q):
    return sorted_values[int(q * (len(sorted_values) - 1))] if sorted_values else float("nan")


def client(port, deadline, timings, errors):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    while time.monotonic() < deadline:
        start = time.monotonic()
        try:
            conn.request("GET", "/metrics")
            response = conn.getresponse()
            body = response.read()
            length = int(response.getheader("Content-Length", "-1"))
            # /metrics is streamed, chunked: http.client raises IncompleteRead if it is cut.
            whole = len(body) == length or response.getheader("Transfer-Encoding") == "chunked"
            if response.status != 200 or not whole or not body.endswith(b"\n"):
                errors.append(f"status {response.status}, {len(body)} bytes of {length}")
            else:
                timings.append((start, time.monotonic() - start))
        except (OSError, http.client.HTTPException) as e:
            errors.append(f"{type(e).__name__}: {e}")
            conn.close()
    conn.close()


def slowloris(port, count, closed):
    """Opens `count` connections that never finish a request head; records how long each lived."""
    sel, trickle = selectors.DefaultSelector(), b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "
    try:
        for i in range(count):
            s = socket.create_connection(("127.0.0.1", port))
            sel.register(s, selectors.EVENT_READ, (time.monotonic(), i % 3 == 0, [0]))
        deadline = time.monotonic() + READ_TIMEOUT + 3 * MARGIN
        while sel.get_map() and time.monotonic() < deadline:
            for key, _ in sel.select(0.2):  # readable: EOF or reset from the server
                try:
                    key.fileobj.recv(4096)
                except OSError:
                    pass
                closed.append(time.monotonic() - key.data[0])
                sel.unregister(key.fileobj)
                key.fileobj.close()
            for key in list(sel.get_map().values()):
                opened, slow, sent = key.data
                if slow:
                    try:
                        key.fileobj.send(trickle[sent[0]:sent[0] + 1] or b"a")
                        sent[0] += 1
                    except OSError:
                        pass  # the server closed it; select reports it next round
    finally:
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        sel.close()


def raw_status(port, payload, timeout=5.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(payload)
        except OSError:
            pass  # the server may answer and close before reading it all
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return data.split(b"\r\n", 1)[0].decode(errors="replace")


def check_load_and_slowloris(r, d, args):
    timings, errors, closed = [], [], []
    start = time.monotonic()
    deadline = start + args.seconds
    threads = [threading.Thread(target=client, args=(d.port, deadline, timings, errors))
               for _ in range(args.clients)]
    for t in threads:
        t.start()
    time.sleep(args.seconds / 3)
    slow_start = time.monotonic()
    slowloris(d.port, args.idle, closed)
    slow_end = time.monotonic()
    for t in threads:
        t.join(args.seconds + 30)
    elapsed = time.monotonic() - start
    lat = sorted(t for _, t in timings)
    print(f"     {len(timings)} requests in {elapsed:.1f} s by {args.clients} clients: "
          f"{len(timings) / elapsed:.0f} requests/s, p50 {percentile(lat, 0.5) * 1000:.1f} ms, "
          f"p99 {percentile(lat, 0.99) * 1000:.1f} ms, max {lat[-1] * 1000 if lat else 0:.1f} ms")
    r.check(not errors and len(timings) > args.clients,
            f"{args.clients} keep-alive clients x {args.seconds} s: zero errors",
            f"{len(errors)} errors: {errors[:5]}")
    during = sorted(t for s, t in timings if slow_start <= s <= slow_end)
    p99 = percentile(during, 0.99)
    print(f"     during slowloris ({slow_end - slow_start:.1f} s): {len(during)} requests, "
          f"p99 {p99 * 1000:.1f} ms")
    r.check(len(during) > 10 and p99 < 1.0,
            f"scrapes while {args.idle} connections idle: {len(during)} answered, p99 < 1 s")
    lived = sorted(closed)
    print(f"     idle connections closed after {lived[0] if lived else 0:.2f} .. "
          f"{lived[-1] if lived else 0:.2f} s (read_timeout {READ_TIMEOUT} s)")
    r.check(len(lived) == args.idle and all(1.5 <= t <= READ_TIMEOUT + MARGIN for t in lived),
            f"all {args.idle} idle connections closed by the server within read_timeout + "
            f"{MARGIN} s", f"{len(lived)} closed: {lived}")
    s = d.scrape()
    timeouts = daemon.values(s, "iowatch_http_timeouts_total")
    r.check(timeouts and timeouts[0] >= args.idle,
            f"iowatch_http_timeouts_total counts them ({timeouts})")
    rejected = daemon.values(s, "iowatch_http_rejected_connections_total")
    r.check(rejected == [0], f"no connection rejected below max_connections ({rejected})")


def check_limits(r, d, binary):
    head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 65536 + b"\r\n\r\n"
    status = raw_status(d.port, head)
    r.check(status.startswith("HTTP/1.1 431"), f"64 KiB header -> {status!r}")
    r.check(d.get("/healthz")[0] == 200, "still serving after the oversized head")

    with daemon.Daemon(binary, config=SMALL) as small:
        idle = [socket.create_connection(("127.0.0.1", small.port)) for _ in range(4)]
        try:
            time.sleep(0.3)
            started = time.monotonic()
            status = raw_status(small.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            took = time.monotonic() - started
            r.check(status.startswith("HTTP/1.1 503") and took < 1.0,
                    f"max_connections 4, 4 idle open: a 5th gets {status!r} in {took:.2f} s")
        finally:
            for s in idle:
                s.close()
        time.sleep(0.3)
        samples = small.scrape()
        rejected = daemon.values(samples, "iowatch_http_rejected_connections_total")
        r.check(rejected and rejected[0] >= 1, f"once they close, /metrics is 200 and "
                f"counts the rejection (iowatch_http_rejected_connections_total {rejected})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("iowatch")
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--idle", type=int, default=30)
    args = parser.parse_args()
    daemon.exit_on_sigterm()
    r = daemon.Results()
    try:
        with daemon.Daemon(args.iowatch, config=CONFIG) as d:
            check_load_and_slowloris(r, d, args)
            check_limits(r, d, args.iowatch)
            code, seconds = d.stop()
            r.check(code == 0, f"SIGTERM after the load: exit 0 in {seconds:.2f} s", f"exit {code}")
    except Exception:  # noqa: BLE001 - reported as a failed check; Daemon cleaned up
        r.check(False, "no unexpected error", traceback.format_exc())
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
