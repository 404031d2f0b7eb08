#!/usr/bin/env python3
"""H5-like HTTP traffic on loopback, for captures h5replay imports.

  h5traffic.py serve --port 18080
      (--port 0 takes a free port; the line "serving on 127.0.0.1:PORT" says which, once
      it listens.) An origin like a hybrid app's H5 backend: pages with cookies, a login redirect,
      gzip and deflate bodies, chunked script bodies, JSON and upload endpoints, all on
      HTTP/1.1 keep-alive.

  h5traffic.py client --port 18080 --rounds 3 --manifest out.json
      Walks a deterministic H5 flow over keep-alive connections and writes, per exchange,
      exactly what it sent and what it got back (decoded), for byte-for-byte checks.

  h5traffic.py generate --out big.pcap --mb 400 [--capture tcpdump|h5replay]
      Runs the server and parallel clients while tcpdump (or `h5replay record`) captures
      loopback, until the capture reaches the size asked for.
"""
import argparse
import base64
import gzip
import hashlib
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = "(function(){var h5={order:42,items:[]};" + "".join(f"h5.items.push({{sku:'A-{i}',qty:{i % 7}}});" for i in range(40)) + "window.h5=h5;})();\n"


def page(n):
    rows = "".join(f"<li data-id='{n}-{i}'>item {i} of page {n}: lorem ipsum dolor sit amet</li>" for i in range(60))
    return f"<!doctype html><html><head><title>page {n}</title><script src='/app.js'></script></head><body><ul>{rows}</ul></body></html>".encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "h5traffic/1"
    # Headers and body go out in separate writes; without this, Nagle and delayed ACKs
    # add 40 ms to every exchange.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def send(self, status, body, ctype, headers=(), coding=None, chunked=False):
        if coding == "gzip":
            body = gzip.compress(body, 6, mtime=0)
        elif coding == "deflate":
            body = zlib.compress(body, 6)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        if coding:
            self.send_header("Content-Encoding", coding)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(body), 4000):
                piece = body[i:i + 4000]
                self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def coding(self):
        accepted = self.headers.get("Accept-Encoding", "")
        return "gzip" if "gzip" in accepted else ("deflate" if "deflate" in accepted else None)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/login":
            self.send(302, b"", "text/html", [("Location", "/home"), ("Set-Cookie", "sid=s3cr3t-session; Path=/; HttpOnly")])
        elif path == "/home" or path.startswith("/page/"):
            n = int(path.rsplit("/", 1)[1]) if path.startswith("/page/") else 0
            self.send(200, page(n), "text/html; charset=utf-8", [("Set-Cookie", f"seen={n}; Path=/")], coding=self.coding())
        elif path == "/app.js":
            self.send(200, SCRIPT.encode() * 20, "application/javascript", coding="deflate" if "deflate" in self.headers.get("Accept-Encoding", "") else None, chunked=True)
        elif path == "/api/profile":
            body = json.dumps({"user": 7, "cookie": self.headers.get("Cookie", "")}).encode()
            self.send(200, body, "application/json", chunked=True)
        else:
            self.send(404, b"not here", "text/plain")

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        reply = json.dumps({"received": len(body), "sha256": hashlib.sha256(body).hexdigest()}).encode()
        self.send(201 if self.path.startswith("/api/upload") else 200, reply, "application/json")


def serve(port, ready=None, announce=False):
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    if announce:
        # Printed once the socket listens, with the port the system chose for --port 0.
        print(f"serving on 127.0.0.1:{server.server_address[1]}", flush=True)
    if ready:
        ready.set()
    server.serve_forever()


DOCUMENT = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
SCRIPTED = {"Accept": "*/*"}


def flow(rng, round_, origin):
    """One H5 session: login redirect, pages, script, JSON, form and binary uploads, each
    with the Accept and Referer a web view sends (the page's requests, not the browser's)."""
    page = {"Referer": origin + "/home"}
    yield "GET", "/login", None, dict(DOCUMENT)
    yield "GET", "/home", None, dict(DOCUMENT, **{"Accept-Encoding": "gzip", "Referer": origin + "/login"})
    yield "GET", "/app.js", None, dict(SCRIPTED, **page, **{"Accept-Encoding": "deflate"})
    for n in range(3):
        yield "GET", f"/page/{round_ * 10 + n}", None, dict(DOCUMENT, **page, **{"Accept-Encoding": "gzip, deflate"})
        yield "GET", "/api/profile", None, dict(SCRIPTED, **page, **{"X-Requested-With": "XMLHttpRequest"})
    yield "POST", "/api/order", json.dumps({"order": round_, "items": list(range(20))}).encode(), dict(SCRIPTED, **page, **{"Content-Type": "application/json", "Origin": origin})
    yield "POST", "/api/form", f"a={round_}&b=%E4%B8%AD".encode(), dict(DOCUMENT, **page, **{"Content-Type": "application/x-www-form-urlencoded", "Origin": origin})
    size = rng.choice([512, 4096, 20000, 70000])
    yield "POST", "/api/upload", rng.randbytes(size), dict(SCRIPTED, **page, **{"Content-Type": "application/octet-stream", "Origin": origin})


def client(port, rounds, manifest=None, seed=1, stop=None):
    rng = random.Random(seed)
    records = []
    count = 0
    for round_ in range(rounds):
        if stop is not None and stop.is_set():
            break
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cookies = {}
        for method, path, body, headers in flow(rng, round_, f"http://127.0.0.1:{port}"):
            headers = dict(headers)
            headers["User-Agent"] = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 h5traffic"
            if cookies:
                headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            raw = response.read()
            for value in response.headers.get_all("Set-Cookie") or []:
                k, _, v = value.split(";")[0].partition("=")
                cookies[k] = v
            coding = response.headers.get("Content-Encoding")
            count += 1
            decoded = gzip.decompress(raw) if coding == "gzip" else zlib.decompress(raw) if coding == "deflate" else raw
            if manifest is not None:
                records.append({
                    "method": method, "url": f"http://127.0.0.1:{port}{path}",
                    "requestHeaders": [[k, v] for k, v in headers.items()],
                    "requestBody": base64.b64encode(body or b"").decode(),
                    "status": response.status, "responseBody": base64.b64encode(decoded).decode(),
                    "setCookie": response.headers.get_all("Set-Cookie") or [],
                })
        conn.close()
    if manifest is not None:
        with open(manifest, "w") as f:
            json.dump(records, f)
    return count


def generate(out, megabytes, capture, clients, port):
    ready = threading.Event()
    threading.Thread(target=serve, args=(port, ready), daemon=True).start()
    ready.wait()
    if capture == "h5replay":
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        binary = os.environ.get("H5REPLAY_BIN", os.path.join(root, ".build/release/h5replay"))
        db = out + ".sqlite"
        recorder = subprocess.Popen([binary, "record", "-i", "lo", "-f", f"tcp port {port}", "--write-pcap", out, "--db", db, "--name", "generated", "--replace"], stdout=subprocess.DEVNULL)
    else:
        recorder = subprocess.Popen(["tcpdump", "-i", "lo", "-s", "262144", "-B", "65536", "-U", "-w", out, f"tcp port {port}"], stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    stop = threading.Event()
    workers = [threading.Thread(target=lambda s=s: [client(port, 1_000_000, seed=s, stop=stop)], daemon=True) for s in range(clients)]
    for w in workers:
        w.start()
    target = megabytes * 1024 * 1024
    started = time.time()
    while os.path.exists(out) and os.path.getsize(out) < target or not os.path.exists(out):
        time.sleep(0.5)
        size = os.path.getsize(out) if os.path.exists(out) else 0
        print(f"\r{out}: {size / 1048576:.0f} of {megabytes} MB, {time.time() - started:.0f} s", end="", file=sys.stderr, flush=True)
    stop.set()
    for w in workers:
        w.join(timeout=30)
    time.sleep(1)
    recorder.send_signal(signal.SIGINT)
    recorder.wait(timeout=120)
    print(f"\r{out}: {os.path.getsize(out) / 1048576:.0f} MB in {time.time() - started:.0f} s", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, default=18080)
    c = sub.add_parser("client")
    c.add_argument("--port", type=int, default=18080)
    c.add_argument("--rounds", type=int, default=1)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--manifest")
    g = sub.add_parser("generate")
    g.add_argument("--out", required=True)
    g.add_argument("--mb", type=int, default=400)
    g.add_argument("--capture", choices=["tcpdump", "h5replay"], default="tcpdump")
    g.add_argument("--clients", type=int, default=4)
    g.add_argument("--port", type=int, default=18090)
    args = parser.parse_args()
    # A parent may start this with SIGINT and SIGTERM blocked (a test runner's worker
    # thread); unblocked, either one stops it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    if args.command == "serve":
        serve(args.port, announce=True)
    elif args.command == "client":
        print(client(args.port, args.rounds, args.manifest, args.seed))
    else:
        generate(args.out, args.mb, args.capture, args.clients, args.port)


if __name__ == "__main__":
    main()
