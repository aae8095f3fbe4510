#!/usr/bin/env python3
"""`pipescope perfetto TRACE`: a real HTTP client fetches the trace the way the Perfetto UI does.

Checks that the server answers on 127.0.0.1 only (127.0.1.1, another loopback address, is refused),
that an unknown path is a 404 and a CORS preflight a 204 (the server keeps waiting after both), that
the trace's exact bytes come with the CORS headers the UI needs, and that the command then exits 0.
usage: cli_perfetto_serve.py PIPESCOPE_CLI TRACE
"""
import hashlib
import http.client
import os
import socket
import subprocess
import sys
import time

cli, trace = sys.argv[1], sys.argv[2]
name = os.path.basename(trace)


def fail(msg):
    sys.exit(f"cli_perfetto_serve: {msg}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


port = free_port()
env = dict(os.environ, DISPLAY="", WAYLAND_DISPLAY="")   # no browser: it prints the URL
server = subprocess.Popen([cli, "perfetto", trace, "--port", str(port), "--timeout", "120"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
first = server.stdout.readline()   # "serving ..." once it listens
if "serving" not in first:
    fail(f"unexpected first line: {first!r}")
url_line = server.stdout.readline()
expected_url = f"https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/{name}"
if expected_url not in url_line:
    fail(f"the URL line does not hold {expected_url}: {url_line!r}")


def request(method, path, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r, body


# Not on other addresses: 127.0.1.1 is a loopback address too, but not the one it listens on.
try:
    socket.create_connection(("127.0.1.1", port), timeout=5).close()
    fail(f"something accepted a connection on 127.0.1.1:{port}: the server must listen on 127.0.0.1 only")
except (ConnectionRefusedError, OSError):
    pass

r, body = request("GET", "/something-else")
if r.status != 404:
    fail(f"GET /something-else: expected 404, got {r.status}")
r, body = request("OPTIONS", f"/{name}", {"Origin": "https://ui.perfetto.dev",
                                           "Access-Control-Request-Method": "GET"})
if r.status != 204 or r.getheader("Access-Control-Allow-Origin") != "https://ui.perfetto.dev":
    fail(f"preflight: {r.status} {r.getheaders()}")

r, body = request("GET", f"/{name}", {"Origin": "https://ui.perfetto.dev"})
want = open(trace, "rb").read()
if r.status != 200:
    fail(f"GET /{name}: expected 200, got {r.status}")
if r.getheader("Access-Control-Allow-Origin") != "https://ui.perfetto.dev":
    fail(f"no CORS header for the UI: {r.getheaders()}")
if int(r.getheader("Content-Length")) != len(want):
    fail(f"Content-Length {r.getheader('Content-Length')} for a file of {len(want)} bytes")
if hashlib.sha256(body).digest() != hashlib.sha256(want).digest():
    fail(f"served {len(body)} bytes that differ from the file's {len(want)}")

try:
    rc = server.wait(timeout=30)
except subprocess.TimeoutExpired:
    server.kill()
    fail("the server did not stop after the trace was fetched")
rest = server.stdout.read()
if rc != 0 or "fetched the trace" not in rest:
    fail(f"exit {rc} after the fetch: {rest!r}")
print(f"perfetto command: served {len(want)} bytes on 127.0.0.1:{port} only, then stopped")
