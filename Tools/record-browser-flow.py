#!/usr/bin/env python3
"""Records an H5 scenario page, loaded by a real browser engine, into a pcap with
`h5replay record`, so that Recordings/ holds flows a real engine produced.

  record-browser-flow.py SCENARIO OUT.pcap [--browser chromium|webkitgtk]

Scenarios:
  xhr-fetch      a page whose script posts JSON with XMLHttpRequest, posts a form body
                 with fetch, reads a JSON API, and sets a cookie with document.cookie
  form-redirect  a page that submits a login form (POST) answered by a 302 with
                 Set-Cookie, then a page whose script fetches with that cookie
  event-stream   a page whose script logs in with fetch (Set-Cookie), then opens an
                 EventSource that carries the session cookie and reads two events

The origin runs on 127.0.0.1; headless Chromium (Debian's `chromium`) loads the page with
a virtual-time budget so that its scripts finish, or, with `--browser webkitgtk`,
WebKitGTK (the lab's `Tools/lab/load`, a WebKit engine like WKWebView's) loads it until
its script sets the title to done; `h5replay record -i lo` captures. Needs
root (capturing) and the release or debug build of h5replay.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGES = {
    "xhr-fetch": {
        "/": b"""<!doctype html><html><head><title>h5 order</title></head><body><h1>Order</h1><p id=out>...</p>
<script>
document.cookie = "theme=dark; path=/";
var x = new XMLHttpRequest();
x.open("POST", "/api/order");
x.setRequestHeader("Content-Type", "application/json");
x.onload = function () {
  fetch("/api/pay", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "amount=9.99&currency=CNY"})
    .then(function (r) { return r.json(); })
    .then(function () { return fetch("/api/status"); })
    .then(function (r) { return r.text(); })
    .then(function (t) { document.getElementById("out").textContent = t; document.title = "done"; });
};
x.send(JSON.stringify({order: 42, items: ["a", "b"]}));
</script></body></html>""",
    },
    "form-redirect": {
        "/": b"""<!doctype html><html><head><title>login</title></head><body>
<form id=f method=post action=/login><input name=user value=alice><input name=pin value=1234></form>
<script>document.getElementById("f").submit();</script></body></html>""",
        "/home": b"""<!doctype html><html><head><title>home</title></head><body><p id=out>...</p>
<script>fetch("/api/profile", {credentials: "same-origin"}).then(function (r) { return r.text(); })
.then(function (t) { document.getElementById("out").textContent = t; document.title = "done"; });</script></body></html>""",
    },
    "event-stream": {
        "/": b"""<!doctype html><html><head><title>prices</title></head><body><p id=out>...</p>
<script>
fetch("/api/login", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({user: "alice"})})
  .then(function () {
    var seen = [];
    var source = new EventSource("/events");
    source.onmessage = function (m) {
      seen.push(m.data);
      if (seen.length == 2) { source.close(); document.getElementById("out").textContent = seen.join(","); document.title = "done"; }
    };
  });
</script></body></html>""",
    },
}


class Origin(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    scenario = "xhr-fetch"

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="application/json", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def events(self):
        # A server-sent event stream: no length, each event written as it comes, the
        # connection left open until the page closes it.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        try:
            for price in ("101.5", "101.7", "101.9"):
                self.wfile.write(("data: %s\n\n" % price).encode())
                self.wfile.flush()
                time.sleep(0.2)
            time.sleep(2)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def do_GET(self):
        pages = PAGES[self.scenario]
        if self.path == "/events":
            self.events()
        elif self.path in pages:
            self.reply(200, pages[self.path], "text/html; charset=utf-8")
        elif self.path.startswith("/api/"):
            self.reply(200, json.dumps({"path": self.path, "cookie": self.headers.get("Cookie", "")}).encode())
        else:
            self.reply(404, b"not here", "text/plain")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/api/login":
            self.reply(200, b'{"ok": true}', "application/json", [("Set-Cookie", "session=s-%d; Path=/; HttpOnly" % len(body))])
        elif self.path == "/login":
            self.reply(302, b"", "text/html", [("Location", "/home"), ("Set-Cookie", "session=s-%d; Path=/; HttpOnly" % len(body))])
        else:
            self.reply(200, json.dumps({"received": len(body)}).encode())


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in PAGES:
        sys.exit(__doc__)
    scenario, out = sys.argv[1], os.path.abspath(sys.argv[2])
    browser = "chromium"
    if "--browser" in sys.argv:
        browser = sys.argv[sys.argv.index("--browser") + 1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binary = os.environ.get("H5REPLAY_BIN") or next(
        (p for p in (os.path.join(root, ".build/release/h5replay"), os.path.join(root, ".build/debug/h5replay")) if os.path.exists(p)), None)
    if not binary:
        sys.exit("build h5replay first (Tools/setup)")
    Origin.scenario = scenario
    server = ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    db = out + ".sqlite"
    recorder = subprocess.Popen([binary, "record", "-i", "lo", "-f", f"tcp port {port}", "--write-pcap", out, "--db", db, "--name", scenario, "--replace"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while "recording on" not in recorder.stderr.readline():
        if recorder.poll() is not None:
            sys.exit("h5replay record did not start: " + recorder.stderr.read())
    time.sleep(0.3)
    if browser == "webkitgtk":
        subprocess.run([os.path.join(root, "Tools/lab/load"), f"http://127.0.0.1:{port}/", "--timeout", "20"], check=True, capture_output=True, timeout=120)
    else:
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                        "--virtual-time-budget=5000", "--dump-dom", f"http://127.0.0.1:{port}/"], check=True, capture_output=True, timeout=120)
    time.sleep(0.5)
    recorder.send_signal(signal.SIGINT)
    output, _ = recorder.communicate(timeout=60)
    server.shutdown()
    os.remove(db)
    print(output.strip())


if __name__ == "__main__":
    main()
