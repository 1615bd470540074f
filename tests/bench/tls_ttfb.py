#!/usr/bin/env python3
"""Time to the first byte of /metrics over HTTPS and over plain HTTP, same daemon.

Usage: tests/bench/tls_ttfb.py build/iowatch [--requests 50]

Starts `iowatch serve` twice on the bundled fixture tree (tests/fixtures/real-vm), once
with a self-signed certificate (openssl) and once plain, and sends GET /metrics on one
keep-alive connection per run, timing from the request's last byte to the response's
first. Prints p50 / p90 / max in ms for each. Small TLS records meeting Nagle's algorithm
and the client's delayed ACK held the first byte 40-50 ms before TCP_NODELAY
(found by adversarial testing); plain HTTP answered in ~1 ms.
"""
import argparse
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "tests/fixtures/real-vm")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary, tmp, tls):
    port = free_port()
    config = os.path.join(tmp, f"iowatch-{int(tls)}.yaml")
    with open(config, "w") as f:
        f.write("probes: {enabled: false}\n")
        if tls:
            f.write(f"web: {{tls: {{cert_file: {tmp}/cert.pem, key_file: {tmp}/key.pem}}}}\n")
    proc = subprocess.Popen(
        [binary, "serve", f"--web.listen-address=127.0.0.1:{port}", f"--state.dir={tmp}/state",
         f"--config.file={config}", f"--path.procfs={FIXTURE}/proc", f"--path.sysfs={FIXTURE}/sys"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the daemon did not listen")


def read_rest(sock, data):
    """Reads the rest of one response (Content-Length or chunked) after its first bytes."""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    headers = head.decode().lower()
    if "content-length:" in headers:
        length = int(headers.split("content-length:")[1].split("\r\n")[0])
        while len(body) < length:
            body += sock.recv(65536)
    else:  # chunked: until the last chunk
        while not body.endswith(b"0\r\n\r\n"):
            body += sock.recv(65536)


def measure(port, tls, requests):
    """Milliseconds from each request's last byte to its response's first."""
    sock = socket.create_connection(("127.0.0.1", port))
    if tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        sock = context.wrap_socket(sock)
    times = []
    for _ in range(requests):
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        start = time.perf_counter()
        first = sock.recv(1)
        times.append((time.perf_counter() - start) * 1000)
        read_rest(sock, first)
    sock.close()
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="iowatch-ttfb-")
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-keyout", f"{tmp}/key.pem", "-out",
                        f"{tmp}/cert.pem"], check=True, capture_output=True)
        for tls in (True, False):
            proc, port = start(os.path.abspath(args.binary), tmp, tls)
            try:
                times = sorted(measure(port, tls, args.requests))
                p50 = statistics.median(times)
                p90 = times[int(len(times) * 0.9) - 1]
                print(f"{'https' if tls else 'http '}: first byte p50 {p50:.2f} ms, "
                      f"p90 {p90:.2f} ms, max {times[-1]:.2f} ms ({len(times)} requests)")
            finally:
                proc.terminate()
                proc.wait()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
