#!/usr/bin/env python3
"""A small HTTP or HTTPS origin for h5replay's proxy tests, on loopback.

Usage: origin.py [--cert CERT --key KEY] [--slow SECONDS]
Prints "port N" once listening. Paths:
  /page         an HTML page that sets a cookie
  /api/echo     echoes the request body (POST), gzip-coded when the client accepts it
  /redirect     302 to /page
  /slow         answers after --slow seconds
"""
import argparse
import gzip
import http.server
import ssl
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    slow = 0.0

    def log_message(self, *args):
        pass

    def send(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/page"):
            self.send(200, b"<!doctype html><title>page</title><p>hello", [("Content-Type", "text/html"), ("Set-Cookie", "session=abc123; Path=/; HttpOnly")])
        elif self.path.startswith("/redirect"):
            self.send(302, b"", [("Location", "/page")])
        elif self.path.startswith("/slow"):
            time.sleep(self.slow)
            self.send(200, b"late", [("Content-Type", "text/plain")])
        else:
            self.send(404, b"no such path", [("Content-Type", "text/plain")])

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if "gzip" in (self.headers.get("Accept-Encoding") or ""):
            self.send(200, gzip.compress(b"echo:" + body), [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")])
        else:
            self.send(200, b"echo:" + body, [("Content-Type", "text/plain")])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--slow", type=float, default=0.0)
    args = parser.parse_args()
    Handler.slow = args.slow
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print("port", server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
