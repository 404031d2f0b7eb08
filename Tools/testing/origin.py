#!/usr/bin/env python3
"""A small HTTP or HTTPS origin for h5replay's proxy tests, on loopback.

Usage: origin.py [--cert CERT --key KEY] [--slow SECONDS] [--download-bytes N] [--result-file FILE]
Prints "port N" once listening. Paths:
  /page         an HTML page that sets a cookie
  /api/echo     echoes the request body (POST), gzip-coded when the client accepts it
  /redirect     302 to /page
  /slow         answers after --slow seconds
  /stream       an event stream: one event, then nothing for 60 s (a response still going)
  /ws           a WebSocket that echoes each message
  /app          a page whose script opens an EventSource on /events, a WebSocket on /ws
                (sends one message, waits for its echo) and downloads /download, then
                POSTs what it saw to /result as JSON (events, their times, echo, bytes,
                the download's milliseconds), which --result-file keeps
  /events       an event stream: three events 0.4 s apart, then the response ends
  /download     --download-bytes of application/octet-stream with a Content-Length
"""
import base64
import hashlib
import argparse
import gzip
import http.server
import os
import ssl
import sys
import time

APP = b"""<!doctype html><title>app</title>
<script>
const results = {events: [], eventTimes: [], echo: null, downloaded: 0};
const parts = new Set();
function finished(part) {
  parts.add(part);
  if (parts.size === 3) fetch("/result", {method: "POST", body: JSON.stringify(results)});
}
const source = new EventSource("/events");
source.onmessage = (e) => { results.events.push(e.data); results.eventTimes.push(performance.now()); };
source.onerror = () => { source.close(); finished("events"); };
const socket = new WebSocket("wss://" + location.host + "/ws");
socket.onopen = () => socket.send("hello from the page");
socket.onmessage = (e) => { results.echo = e.data; socket.close(); finished("socket"); };
socket.onerror = () => finished("socket");
const downloadStarted = performance.now();
fetch("/download").then(async (response) => {
  const reader = response.body.getReader();
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    results.downloaded += value.length;
  }
  results.downloadMs = performance.now() - downloadStarted;
}).catch((e) => { results.downloadError = String(e); }).finally(() => finished("download"));
</script>
"""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    slow = 0.0
    download_bytes = 0
    result_file = None

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
        elif self.path.startswith("/stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            event = b"data: one\n\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
            time.sleep(60)
        elif self.path.startswith("/app"):
            self.send(200, APP, [("Content-Type", "text/html")])
        elif self.path.startswith("/events"):
            self.send_events()
        elif self.path.startswith("/download"):
            self.send_download()
        elif self.path.startswith("/ws"):
            self.echo_websocket()
        elif self.path.startswith("/slow"):
            time.sleep(self.slow)
            self.send(200, b"late", [("Content-Type", "text/plain")])
        else:
            self.send(404, b"no such path", [("Content-Type", "text/plain")])

    def send_events(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        # A long retry, so that the client does not reconnect before it closes the source.
        for n, word in enumerate([b"one", b"two", b"three"]):
            if n:
                time.sleep(0.4)
            event = (b"retry: 60000\n" if n == 0 else b"") + b"data: " + word + b"\n\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def send_download(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(self.download_bytes))
        self.end_headers()
        block = bytes(range(256)) * 4096
        left = self.download_bytes
        while left > 0:
            self.wfile.write(block[:left])
            left -= len(block)

    def echo_websocket(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return
            opcode, length = head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = int.from_bytes(self.rfile.read(2), "big")
            elif length == 127:
                length = int.from_bytes(self.rfile.read(8), "big")
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            if opcode == 8:
                return
            if opcode in (1, 2) and length < 126:
                self.wfile.write(bytes([0x80 | opcode, length]) + payload)
                self.wfile.flush()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if self.path.startswith("/result") and self.result_file:
            # Whole or not at all: a reader polls for the file.
            with open(self.result_file + ".part", "wb") as f:
                f.write(body)
            os.replace(self.result_file + ".part", self.result_file)
        if "gzip" in (self.headers.get("Accept-Encoding") or ""):
            self.send(200, gzip.compress(b"echo:" + body), [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")])
        else:
            self.send(200, b"echo:" + body, [("Content-Type", "text/plain")])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument("--download-bytes", type=int, default=1 << 20)
    parser.add_argument("--result-file")
    args = parser.parse_args()
    Handler.slow = args.slow
    Handler.download_bytes = args.download_bytes
    Handler.result_file = args.result_file
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
