#!/usr/bin/python3
"""Runs one lab experiment in a real WebKitGTK engine and prints its result as JSON.

  engine.py EXPERIMENT_ID

An experiment (Tools/lab/experiments.py) is one page and one handler: the page is served
either by a custom URI scheme (`h5r://app/`, which WebKitGTK builds on the same
WebURLSchemeHandler code as WKURLSchemeHandler) or by a local HTTP origin; its script does
what the experiment says and posts what it saw through a script message handler. The
result says what the page did, what the scheme handler and the HTTP origins received,
what the page saw, and what the engine's cookie manager holds. `Tools/lab/run` starts this
once per experiment, in its own process (an engine crash is an observation, never a hang).
Needs Debian's gir1.2-webkit2-4.1, gir1.2-soup-3.0, python3-gi and a display (Xvfb).
"""
import base64
import hashlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gi

gi.require_version("WebKit2", "4.1")
gi.require_version("Gtk", "3.0")
gi.require_version("Soup", "3.0")
from gi.repository import Gio, GLib, Gtk, Soup, WebKit2  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import experiments  # noqa: E402

SCHEME = "h5r"


class Origin:
    """A local HTTP origin: answers by the experiment's routes and records every request."""

    def __init__(self, name, routes, received, keep_bytes=False):
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    body = read_chunked(self.rfile)
                received.append({"at": name, "method": self.command, "path": self.path,
                                 "headers": {k.lower(): v for k, v in self.headers.items()},
                                 "bodyLength": len(body), "body": body.decode("utf-8", "replace")[:2000]})
                if keep_bytes:  # the body's exact bytes, for the framework experiments' byte comparisons
                    received[-1]["bodyBase64"] = base64.b64encode(body[:65536]).decode()
                if self.headers.get("Upgrade", "").lower() == "websocket":
                    # A WebSocket's opening handshake (RFC 6455 section 4.2.2), answered
                    # without Access-Control-Allow-Origin; then the connection closes.
                    key = self.headers.get("Sec-WebSocket-Key", "")
                    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
                    self.send_response(101)
                    self.send_header("Upgrade", "websocket")
                    self.send_header("Connection", "Upgrade")
                    self.send_header("Sec-WebSocket-Accept", accept)
                    self.end_headers()
                    self.wfile.flush()
                    time.sleep(0.3)
                    self.close_connection = True
                    return
                status, headers, payload = experiments.answer(routes, self.command, self.path, origin.urls)
                self.send_response(status)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_OPTIONS = do_HEAD = do_DELETE = do_PATCH = handle_any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.urls = {}
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def read_chunked(f):
    out = b""
    while True:
        size = int(f.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            f.readline()
            return out
        out += f.read(size)
        f.readline()


def main(experiment_id):
    spec = experiments.BY_ID[experiment_id]
    for key in ("api", "other", "handler"):
        spec.setdefault(key, {})
    received = []
    # Two HTTP origins on different sites: 127.0.0.1 ("api") and localhost ("other").
    api = Origin("api", spec.get("api", {}), received, keep_bytes=bool(spec.get("native")))
    other = Origin("other", spec.get("other", {}), received, keep_bytes=bool(spec.get("native")))
    urls = {"api": f"http://127.0.0.1:{api.port}", "other": f"http://localhost:{other.port}", "app": f"{SCHEME}://app"}
    api.urls = other.urls = urls
    # A framework's native half, standing in for it (Tools/lab/frameworks.py); None for the rest.
    native = spec["native"](urls, received) if spec.get("native") else None

    manager = WebKit2.WebsiteDataManager.new_ephemeral()
    if spec.get("itp") is not None:
        manager.set_itp_enabled(spec["itp"])
    context = WebKit2.WebContext.new_with_website_data_manager(manager)
    cookies = manager.get_cookie_manager()
    # Every cookie accepted: ITP alone (set_itp_enabled) decides what is third-party.
    cookies.set_accept_policy(WebKit2.CookieAcceptPolicy.ALWAYS)

    def on_scheme(request):
        body = b""
        stream = request.get_http_body()
        body_kind = "none"
        if stream is not None:
            body_kind = "stream"
            while True:
                chunk = stream.read_bytes(65536, None)
                if chunk.get_size() == 0:
                    break
                body += chunk.get_data()
        headers = {}
        h = request.get_http_headers()
        if h is not None:
            h.foreach(lambda name, value: headers.__setitem__(name.lower(), value))
        path = request.get_uri()[len(urls["app"]):] or "/"
        received.append({"at": "handler", "method": request.get_http_method(), "path": path, "headers": headers,
                         "bodyLength": len(body), "body": body.decode("utf-8", "replace")[:2000], "bodyGiven": body_kind})
        if native is not None and native.scheme(request, path, headers, body):
            return  # the stand-in finishes the request itself
        status, resp_headers, payload = experiments.answer(spec.get("handler", {}), request.get_http_method(), path, urls)
        response = WebKit2.URISchemeResponse.new(Gio.MemoryInputStream.new_from_bytes(GLib.Bytes.new(payload)), len(payload))
        response.set_status(status, None)
        mh = Soup.MessageHeaders.new(Soup.MessageHeadersType.RESPONSE)
        for k, v in resp_headers:
            if k.lower() == "content-type":
                response.set_content_type(v)
            mh.append(k, v)
        response.set_http_headers(mh)
        request.finish_with_response(response)

    context.register_uri_scheme(SCHEME, on_scheme)
    security = context.get_security_manager()
    security.register_uri_scheme_as_cors_enabled(SCHEME)
    security.register_uri_scheme_as_secure(SCHEME)

    content = WebKit2.UserContentManager()
    content.register_script_message_handler("lab")
    if native is not None:
        # The framework's scripts, at document start as its WKUserScripts, and its message handlers.
        for source, main_frame_only in native.user_scripts():
            frames = WebKit2.UserContentInjectedFrames.TOP_FRAME if main_frame_only else WebKit2.UserContentInjectedFrames.ALL_FRAMES
            content.add_script(WebKit2.UserScript.new(source, frames, WebKit2.UserScriptInjectionTime.START, None, None))
        for name in native.handlers():
            content.register_script_message_handler(name)

            def on_native(_manager, message, name=name):
                value = message.get_js_value() if hasattr(message, "get_js_value") else message
                native.message(name, value.to_json(0))
            content.connect("script-message-received::" + name, on_native)
    result = {"experiment": experiment_id, "engine": "WebKitGTK", "version": "%d.%d.%d" % (WebKit2.get_major_version(), WebKit2.get_minor_version(), WebKit2.get_micro_version()),
              "rules": spec["rules"], "page": None, "saw": None, "received": received, "cookies": {}}
    done = threading.Event()

    def on_message(_manager, message):
        value = message.get_js_value() if hasattr(message, "get_js_value") else message
        result["saw"] = json.loads(value.to_string())
        collect_cookies()

    def collect_cookies():
        pending = list(spec.get("cookieURLs", []))
        if not pending:
            Gtk.main_quit()
            return

        def next_url():
            if not pending:
                Gtk.main_quit()
                return
            key = pending.pop(0)
            uri = urls[key.split("/", 1)[0]] + "/" + (key.split("/", 1)[1] if "/" in key else "")

            def got(mgr, res):
                try:
                    jar = mgr.get_cookies_finish(res)
                except GLib.Error:
                    jar = []
                result["cookies"][key] = sorted([{"name": c.get_name(), "value": c.get_value(), "httpOnly": c.get_http_only(),
                                                  "expires": (c.get_expires().to_unix() if c.get_expires() else None)} for c in jar], key=lambda c: c["name"])
                next_url()
            cookies.get_cookies(uri, None, got)
        next_url()

    content.connect("script-message-received::lab", on_message)
    view = WebKit2.WebView(web_context=context, user_content_manager=content)
    settings = view.get_settings()
    settings.set_enable_write_console_messages_to_stdout(False)
    if native is not None:
        native.attach(view)
        view.connect("script-dialog", native.dialog)
    window = Gtk.OffscreenWindow()
    window.add(view)
    window.show_all()

    page_at = spec["pageAt"]
    html = experiments.page(spec, urls)
    result["page"] = {"url": urls[page_at] + "/index.html", "script": spec["script"]}
    # The page itself comes from the scheme handler or the HTTP origin, as the experiment says.
    routes = spec["handler" if page_at == "app" else page_at]
    routes.setdefault("GET /index.html", (200, [("Content-Type", "text/html")], html))

    # Cookies in the store before the page loads, as a user's earlier visit left them:
    # (origin, name, value). The page loads once the last is stored.
    starting = list(spec.get("startingCookies", []))

    def add_next(*_):
        if not starting:
            view.load_uri(urls[page_at] + "/index.html")
            return
        origin, name, value = starting.pop(0)
        host = urls[origin].split("://", 1)[1].rsplit(":", 1)[0]
        cookies.add_cookie(Soup.Cookie.new(name, value, host, "/", -1), None, lambda mgr, res: (mgr.add_cookie_finish(res), add_next()))
    add_next()

    def timeout():
        result["timedOut"] = True
        Gtk.main_quit()
        return False
    GLib.timeout_add_seconds(spec.get("timeout", 15), timeout)
    Gtk.main()
    # Requests still arriving after the page reported (a redirect's next hop, a beacon).
    time.sleep(spec.get("settle", 0.2))
    if native is not None:
        result["bridge"] = native.report()
    print(json.dumps(result, indent=1, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
