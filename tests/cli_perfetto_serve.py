#!/usr/bin/env python3
"""`pipescope perfetto TRACE`: a real HTTP client fetches the trace the way the Perfetto UI does.

Checks that the server answers on 127.0.0.1 only (127.0.1.1, another loopback address, is refused),
that an unknown path is a 404 and a CORS preflight a 204 (the server keeps waiting after both), that
a request with a foreign Host header (DNS rebinding) is a 403, that an idle connection does not hold
up other requests, that the trace's exact bytes come with the CORS headers the UI needs, and that the
command then exits 0. Then, on copies of the trace: a file swapped for a symbolic link to another
file after the server started is not what is served (the bytes opened at the start are), and a file
truncated in place under the server is reported as a failure (exit 1), never served short.
usage: cli_perfetto_serve.py PIPESCOPE_CLI TRACE
"""
import hashlib
import http.client
import json
import os
import urllib.parse
import socket
import subprocess
import shutil
import sys
import tempfile

cli, trace = sys.argv[1], sys.argv[2]
name = os.path.basename(trace)


def fail(msg):
    sys.exit(f"cli_perfetto_serve: {msg}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(path):
    """Starts `pipescope perfetto path` and returns (process, port) once it listens."""
    port = free_port()
    env = dict(os.environ, DISPLAY="", WAYLAND_DISPLAY="")   # no browser: it prints the URL
    server = subprocess.Popen([cli, "perfetto", path, "--port", str(port), "--timeout", "120"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    first = server.stdout.readline()   # "serving ..." once it listens
    if "serving" not in first:
        fail(f"unexpected first line: {first!r}")
    url_line = server.stdout.readline()
    expected_url = f"https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/{os.path.basename(path)}"
    if expected_url not in url_line:
        fail(f"the URL line does not hold {expected_url}: {url_line!r}")
    # The ready view (docs/perfetto-sql.md): the module, the pinned critical paths, the stage table.
    if "&startupCommands=" not in url_line:
        fail(f"the URL carries no startup commands: {url_line[:200]!r}")
    commands = json.loads(urllib.parse.unquote(url_line.split("&startupCommands=", 1)[1].strip()))
    ids = [c["id"] for c in commands]
    if ids != ["dev.perfetto.RunQuery", "dev.perfetto.PinTracksByRegex", "dev.perfetto.RunQueryAndShowTab"] or \
            "CREATE PERFETTO TABLE pipescope_stage" not in commands[0]["args"][0]:
        fail(f"unexpected startup commands: {ids}")
    return server, port


def wait_exit(server, what):
    try:
        rc = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        fail(f"the server did not stop {what}")
    return rc, server.stdout.read()


server, port = start_server(trace)


def request(method, path, headers=None, port=None):
    port = port or globals()["port"]
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

# An idle connection (opened, nothing sent) must not hold up the others: the 404 below is answered
# while it is still open (a server handling one connection at a time would first time it out).
idle = socket.create_connection(("127.0.0.1", port), timeout=30)
r, body = request("GET", "/something-else")
if r.status != 404:
    fail(f"GET /something-else: expected 404, got {r.status}")
idle.setblocking(False)
try:
    if idle.recv(1, socket.MSG_PEEK) == b"":
        fail("the idle connection was closed before another request was answered: connections are served one by one")
except BlockingIOError:
    pass   # still open, nothing sent: as expected
idle.close()

# DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends Host: evil.example:PORT.
for host in (f"evil.example:{port}", "127.0.0.1.evil.example", f"localhost:{port + 1}"):
    r, body = request("GET", f"/{name}", {"Host": host, "Origin": "https://ui.perfetto.dev"})
    if r.status != 403 or b"127.0.0.1" not in body:
        fail(f"GET with Host: {host}: expected 403, got {r.status} {body!r}")
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

rc, rest = wait_exit(server, "after the trace was fetched")
if rc != 0 or "fetched the trace" not in rest:
    fail(f"exit {rc} after the fetch: {rest!r}")

scratch = tempfile.mkdtemp(prefix="perfetto-serve-")
try:
    # The path swapped for a symbolic link to another file: the server still serves what it opened.
    served = os.path.join(scratch, "swapped.pftrace")
    secret = os.path.join(scratch, "secret")
    shutil.copyfile(trace, served)
    with open(secret, "wb") as f:
        f.write(b"not yours\n" * 1000)
    server, swap_port = start_server(served)
    os.replace(served, served + ".old")
    os.symlink(secret, served)
    r, body = request("GET", "/swapped.pftrace", port=swap_port)
    if r.status != 200 or body != want:
        fail(f"after the swap: {r.status}, {len(body)} bytes, {'the other file' if b'not yours' in body else 'not the trace'}")
    rc, rest = wait_exit(server, "after the swapped trace was fetched")
    if rc != 0:
        fail(f"exit {rc} after serving the swapped trace: {rest!r}")

    # Truncated in place: what was opened is gone; the server says so and fails instead of serving it short.
    shrunk = os.path.join(scratch, "shrunk.pftrace")
    shutil.copyfile(trace, shrunk)
    server, shrink_port = start_server(shrunk)
    os.truncate(shrunk, len(want) // 2)
    try:
        r, body = request("GET", "/shrunk.pftrace", port=shrink_port)
        if r.status == 200 and body == want:
            fail("a truncated file was served as if whole")
    except http.client.HTTPException:
        pass   # a short body: the client sees the transfer fail
    rc, rest = wait_exit(server, "after its file was truncated")
    if rc != 1 or "changed on disk" not in rest and "shrank" not in rest:
        fail(f"a trace truncated under the server: exit {rc}, {rest!r} (expected exit 1 naming the change)")
finally:
    shutil.rmtree(scratch, ignore_errors=True)
print(f"perfetto command: served {len(want)} bytes on 127.0.0.1:{port} only, then stopped; "
      "a swapped file served as opened, a truncated one refused")
