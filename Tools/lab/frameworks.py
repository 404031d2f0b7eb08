"""Experiments that run a framework's OWN interception JavaScript, release by release.

The JavaScript half of a hybrid framework's interception (Capacitor's native-bridge.js,
flutter_inappwebview's XHR and fetch interceptors, KKJSBridge's AjaxHook) runs in WebCore,
so WebKitGTK runs it as WKWebView does. Each experiment loads one release's script at
document start (a WebKit2.UserScript, as the framework's WKUserScript), registers the
script message handler the framework registers, and answers the script's native calls
from Python the way the framework's native code at that release does. That native half
(URLSession, NSHTTPCookieStorage, Dart) is a stand-in: each stand-in names, beside it,
the file and function it follows. The HTTP origins record what reaches the server.

The scripts are third-party files and stay outside the repository: they are read at run
time from the shared frameworks folder (H5REPLAY_FRAMEWORKS, else the repository root's
sibling `shared/frameworks`, whose SOURCES.tsv names repository, tag, commit and path).
When the folder is absent the experiments skip with a note naming what to fetch.
"""
import base64
import http.client
import json
import os
import re
import threading
import urllib.parse
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def frameworks_dir():
    return os.environ.get("H5REPLAY_FRAMEWORKS") or os.path.normpath(os.path.join(ROOT, "..", "shared", "frameworks"))


def sources():
    """SOURCES.tsv: local file -> repository, tag, commit, commit date, path in the repository."""
    out = {}
    try:
        with open(os.path.join(frameworks_dir(), "SOURCES.tsv")) as f:
            for line in f.read().splitlines()[1:]:
                cols = line.split("\t")
                if len(cols) >= 6:
                    out[cols[0]] = {"file": cols[0], "repository": cols[1], "tag": cols[2], "commit": cols[3], "path": cols[5]}
    except OSError:
        pass
    return out


def read(local):
    with open(os.path.join(frameworks_dir(), local), encoding="utf-8") as f:
        return f.read()


def missing_note(files):
    """None when every file is present; else which repository, tag and path to fetch."""
    absent = [f for f in files if not os.path.exists(os.path.join(frameworks_dir(), f["local"]))]
    if not absent:
        return None
    where = "; ".join(f"{f['repository']} at tag {f['tag']}: {f['path']} (as {f['local']})" for f in absent)
    return f"the framework's own files are not in {frameworks_dir()} (set H5REPLAY_FRAMEWORKS to another folder): fetch {where}"


def cited(files):
    table = sources()
    return [dict(table.get(f["local"], {}), file=f["local"], repository=f["repository"], tag=f["tag"], path=f["path"]) for f in files]


# ---------------------------------------------------------------------------------------
# The native side's HTTP: URLSession, standing in.

NATIVE_USER_AGENT = "h5replay-lab native stand-in (URLSession; CFNetwork)"
# Every request the stand-ins sent, (method, path): the checks tell them from WebKit's by
# this, not by a header (KKJSBridge copies the page's User-Agent onto its native request).
SENT = []


class Headers:
    """NSMutableURLRequest's header fields: names case-insensitive, setValue replaces."""

    def __init__(self):
        self.fields = {}

    def set(self, name, value):
        key = name.lower()
        self.fields[key] = (self.fields[key][0] if key in self.fields else name, value)

    def get(self, name):
        return self.fields.get(name.lower(), (None, None))[1]

    def items(self):
        return list(self.fields.values())


def url_session(method, url, headers, body, follow=True):
    """One request as URLSession.shared sends it: its default Accept, Accept-Encoding and
    User-Agent when the request has none, redirects followed natively (301, 302 and 303 turn
    a POST into a GET without its body, 307 and 308 keep both). Returns (status, [(name,
    value)], body, final URL)."""
    hops = 0
    while True:
        parts = urllib.parse.urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=10)
        h = Headers()
        for k, v in headers.items():
            h.set(k, v)
        for k, v in (("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate, br"), ("User-Agent", NATIVE_USER_AGENT)):
            if h.get(k) is None:
                h.set(k, v)
        conn.putrequest(method, (parts.path or "/") + ("?" + parts.query if parts.query else ""), skip_accept_encoding=True)
        for k, v in h.items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        SENT.append([method, parts.path or "/"])
        resp = conn.getresponse()
        data = resp.read()
        status, resp_headers = resp.status, resp.getheaders()
        conn.close()
        location = resp.getheader("Location")
        if follow and status in (301, 302, 303, 307, 308) and location and hops < 10:
            hops += 1
            url = urllib.parse.urljoin(url, location)
            if status in (301, 302, 303) and method not in ("GET", "HEAD"):
                method, body = "GET", None
                headers = Headers()
                for k, v in h.items():
                    if k.lower() not in ("content-type", "content-length"):
                        headers.set(k, v)
            else:
                headers = h
            continue
        return status, resp_headers, data, url


def in_thread(work, then):
    """Runs work() off the main loop and then(result) back on it, as a URLSession task's
    completion handler runs after the request, never inside the script's call."""
    from gi.repository import GLib

    def go():
        try:
            out = ("ok", work())
        except Exception as e:  # noqa: BLE001 - a stand-in's failure is what the page gets
            out = ("error", f"{type(e).__name__}: {e}")
        GLib.idle_add(lambda: (then(out), False)[1])
    threading.Thread(target=go, daemon=True).start()


class Native:
    """The framework's native half: scripts to inject, message handlers, prompt answers,
    custom-scheme requests it takes over, and a record of what the page's script sent it."""

    def __init__(self, bridge, urls, received):
        self.bridge, self.urls, self.received = bridge, urls, received
        self.calls = []
        self.view = None

    def user_scripts(self):
        return []

    def handlers(self):
        return []

    def attach(self, view):
        self.view = view

    def js(self, source):
        self.view.evaluate_javascript(source, -1, None, None, None, None, None)

    def message(self, name, body_json):
        pass

    def prompt(self, message, default):
        return None

    def dialog(self, _view, dialog):
        from gi.repository import WebKit2
        if dialog.get_dialog_type() == WebKit2.ScriptDialogType.PROMPT:
            answer = self.prompt(dialog.get_message(), dialog.prompt_get_default_text())
            self.calls.append({"prompt": dialog.get_message()[:300], "answer": (answer or "")[:300]})
            if answer is not None:
                dialog.prompt_set_text(answer)
        return True  # never a real dialog

    def scheme(self, request, path, headers, body):
        return False

    def report(self):
        return dict(self.bridge, files=cited(self.bridge["files"]), calls=self.calls[:40], sentNatively=list(SENT))


# ---------------------------------------------------------------------------------------
# Capacitor

CAPACITOR_VERSIONS = ["4.8.2", "5.7.8", "6.0.0", "6.1.0", "6.1.1", "6.1.2", "7.0.0", "7.4.2", "7.4.3", "8.4.2"]
# The iOS files in the shared folder exist for 4.8.2, 6.1.2, 7.4.3 and 8.4.2; a release
# between them is answered as the nearest of those with the same protocol does.
CAPACITOR_NATIVE = {"4.8.2": "4.8.2", "5.7.8": "6.1.2", "6.0.0": "6.1.2", "6.1.0": "6.1.2", "6.1.1": "6.1.2", "6.1.2": "6.1.2",
                    "7.0.0": "6.1.2", "7.4.2": "6.1.2", "7.4.3": "7.4.3", "8.4.2": "8.4.2"}


def vkey(v):
    return tuple(int(x) for x in v.split("."))


RULES = os.path.join(ROOT, "Sources/WebViewEmulation/Resources/rules.json")


def holds(rule, component, version):
    """Whether rules.json says `rule` holds at `component`'s `version`: its `versions` range
    (npm syntax; the comparators and `||` the file uses), or every release when it has none.
    The model's prediction per release comes from here, so a check measures the range."""
    with open(RULES) as f:
        entry = next(r for r in json.load(f)["rules"] if r["id"] == rule)
    text = (entry.get("versions") or {}).get(component)
    if text is None:
        return True
    v = vkey(version)

    def admits(word):
        op = re.match(r"^(<=|>=|<|>|=)?", word).group(0)
        bound = tuple((int(x) for x in (word[len(op):].split(".") + ["0", "0"])[:3]))
        return {"<": v < bound, "<=": v <= bound, ">": v > bound, ">=": v >= bound, "=": v == bound, "": v == bound}[op]
    return any(all(admits(w) for w in alt.split()) for alt in text.split("||"))


def capacitor_files(version):
    native = CAPACITOR_NATIVE[version]
    files = [{"local": f"capacitor/{version}/native-bridge.js", "repository": "ionic-team/capacitor", "tag": version,
              "path": "ios/Capacitor/Capacitor/assets/native-bridge.js"}]
    for name, path in (("HttpRequestHandler.swift", "Plugins/HttpRequestHandler.swift"), ("WebViewAssetHandler.swift", "WebViewAssetHandler.swift"),
                       ("WebViewDelegationHandler.swift", "WebViewDelegationHandler.swift"), ("JSExport.swift", "JSExport.swift")):
        files.append({"local": f"capacitor/{native}/ios/{name}", "repository": "ionic-team/capacitor", "tag": native,
                      "path": "ios/Capacitor/Capacitor/" + path})
    return files


class CapacitorNative(Native):
    def __init__(self, version, urls, received):
        native = CAPACITOR_NATIVE[version]
        super().__init__({
            "framework": "Capacitor", "version": version, "files": capacitor_files(version),
            "native": f"stand-ins follow the iOS files at {native} (HttpRequestHandler.request, WebViewAssetHandler.handleCapacitorHttpRequest, "
                      "WebViewDelegationHandler's prompt and message handler, JSExport.exportCapacitorGlobalJS) and CapacitorUrlRequest.swift "
                      "at commit 00458b7, the version the rules cite (setRequestBody, getRequestData); that file is not in the shared folder. "
                      "URLSession is Python's http.client; the app's origin is h5r://app rather than capacitor://localhost.",
        }, urls, received)
        self.version = version

    def user_scripts(self):
        # JSExport.exportCapacitorGlobalJS: the config before the bridge, main frame only, at
        # document start; JSExport.exportBridgeJS then injects native-bridge.js the same way.
        config = f"window.Capacitor = {{ DEBUG: false, isLoggingEnabled: false, Plugins: {{}} }}; window.WEBVIEW_SERVER_URL = '{self.urls['app']}';"
        return [(config, True), (read(f"capacitor/{self.version}/native-bridge.js"), True)]

    def handlers(self):
        # CAPBridgeViewController / WebViewDelegationHandler: the handler is named "bridge".
        return ["bridge"]

    def prompt(self, message, default):
        # WebViewDelegationHandler.webView(_:runJavaScriptTextInputPanelWithPrompt:...): the
        # synchronous config questions. CapacitorHttp is enabled (plugins.CapacitorHttp.enabled
        # true in capacitor.config); CapacitorCookies keeps its default, off.
        try:
            payload = json.loads(message)
        except ValueError:
            return ""
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind == "CapacitorHttp":
            return "true"
        if kind == "CapacitorCookies.isEnabled":
            return "false"
        return ""

    def message(self, name, body_json):
        # WebViewDelegationHandler.userContentController(_:didReceive:): type "message" is a
        # plugin call; CapacitorHttp.request goes to HttpRequestHandler.request.
        call = json.loads(body_json) if body_json else None
        if not isinstance(call, dict) or call.get("type", "message") != "message" or call.get("pluginId") == "Console":
            return
        self.calls.append({"pluginId": call.get("pluginId"), "methodName": call.get("methodName"), "options": call.get("options")})
        if call.get("pluginId") != "CapacitorHttp":
            return
        in_thread(lambda: self.http_request(call.get("options") or {}), lambda out: self.answer(call, out))

    def http_request(self, options):
        """HttpRequestHandler.request (at the tag) with CapacitorUrlRequest (commit 00458b7):
        headers by setValue, Accept-Language from the init, the body set only when the request
        has a Content-Type (setRequestBody -> getRequestData), then URLSession.shared."""
        url = options.get("url")
        method = options.get("method") or "GET"
        data_type = options.get("dataType") or "any"
        h = Headers()
        h.set("Accept-Language", "en-US,en;q=0.5")  # CapacitorUrlRequest.init
        headers = options.get("headers") or {}
        for k, v in headers.items():  # setRequestHeaders: request.setValue("\(value!)", ...)
            h.set(k, v if isinstance(v, str) else json.dumps(v))
        body = None
        # `call.options["data"] as? JSValue`: a null that arrived (NSNull, a JSValue in
        # Capacitor's JSTypes) still goes to setRequestBody, as on iOS.
        if "data" in options:
            content_type = h.get("Content-Type")
            if content_type is not None:
                body = self.request_data(options["data"], content_type, data_type, h)
        status, resp_headers, data, final = url_session(method, url, h, body)
        # HttpRequestHandler.buildResponse: headers lower-cased, url the final one, JSON parsed.
        lower = {}
        for k, v in resp_headers:
            lower[k.lower()] = v
        ctype = (lower.get("content-type") or "application/default").lower()
        if "application/json" in ctype:
            try:
                out = json.loads(data)
            except ValueError as e:
                out = str(e)
        else:
            out = data.decode("utf-8", "replace")
        return {"status": status, "headers": lower, "url": final, "data": out}

    def request_data(self, value, content_type, data_type, h):
        """CapacitorUrlRequest.getRequestData (commit 00458b7)."""
        if data_type == "file":
            return base64.b64decode(value)
        if data_type == "formData":
            if not isinstance(value, list):
                raise ValueError("Data must be an array for FormData")
            boundary = self.boundary(content_type, h)
            out = b""
            for item in value:
                key, val = item.get("key"), item.get("value")
                if item.get("type") == "base64File":
                    out += f"--{boundary}\r\nContent-Disposition: form-data; name=\"{key}\"; filename=\"{item.get('fileName')}\"\r\n".encode()
                    out += f"Content-Type: {item.get('contentType')}\r\nContent-Transfer-Encoding: binary\r\n\r\n".encode()
                    out += base64.b64decode(val) + b"\r\n"
                elif item.get("type") == "string":
                    out += f"--{boundary}\r\nContent-Disposition: form-data; name=\"{key}\"\r\n\r\n".encode() + str(val).encode() + b"\r\n"
            return out + f"--{boundary}--\r\n".encode()
        if isinstance(value, str):  # getRequestDataAsString: a string is sent as it is
            return value.encode()
        if "application/json" in content_type:
            if not isinstance(value, (dict, list)):  # JSONSerialization.isValidJSONObject
                raise ValueError("[ data ] argument for request of content-type [ application/json ] must be serializable to JSON")
            return json.dumps(value, separators=(",", ":")).encode()
        if "application/x-www-form-urlencoded" in content_type:
            if not isinstance(value, dict):
                raise ValueError("may only be a plain javascript object")
            return urllib.parse.urlencode([(k, str(v)) for k, v in value.items()]).encode()
        if "multipart/form-data" in content_type:
            if not isinstance(value, dict):
                raise ValueError("may only be a plain javascript object")
            boundary = self.boundary(content_type, h)
            out = b""
            for k, v in value.items():
                if isinstance(v, str):
                    out += f"\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n".encode() + v.encode()
            return out + f"\r\n--{boundary}--\r\n".encode()
        raise ValueError(f"[ data ] argument could not be parsed for content type [ {content_type} ]")

    @staticmethod
    def boundary(content_type, h):
        # The boundary is whatever follows the last "=" of the Content-Type; without one a
        # UUID, and the Content-Type is overridden (overrideContentType).
        if "=" in content_type:
            return content_type.split("=")[-1]
        b = str(uuid.uuid4()).upper()
        h.set("Content-Type", f"multipart/form-data; boundary={b}")
        return b

    def answer(self, call, out):
        # CapacitorBridge's toJs (not in the shared folder), as the bridge's fromNative /
        # returnResult at the tag reads it: {callbackId, pluginId, methodName, success, data|error}.
        kind, value = out
        self.calls.append({"answered": call.get("callbackId"), "success": kind == "ok", "error": None if kind == "ok" else value})
        result = {"callbackId": call.get("callbackId"), "pluginId": call.get("pluginId"), "methodName": call.get("methodName"), "save": False}
        if kind == "ok":
            result.update(success=True, data=value)
        else:
            result.update(success=False, error={"message": value})
        self.js(f"window.Capacitor.fromNative({json.dumps(result)})")

    def scheme(self, request, path, headers, body):
        """WebViewAssetHandler.webView(_:start:) -> handleCapacitorHttpRequest: a path under
        the interceptor prefix is fetched with URLSession.shared, WebKit's own request (method,
        headers, body) sent to the target URL; the response's status, headers and body go back
        to the task. From 6.1.2 (and in 5.7.8) the target is the `u` query parameter; 6.0.0 to
        6.1.1 put the host in the path (/_capacitor_http(s)_interceptor_/HOST/PATH?QUERY), and
        the stand-in reverses that release's createProxyUrl (its WebViewAssetHandler.swift is
        not in the shared folder)."""
        bare = path.split("?", 1)[0]
        if not (bare.startswith("/_capacitor_http_interceptor_") or bare.startswith("/_capacitor_https_interceptor_")):
            return False
        query = urllib.parse.urlsplit(path).query
        target = dict(urllib.parse.parse_qsl(query)).get("u")
        if not target:
            scheme = "https" if bare.startswith("/_capacitor_https_interceptor_") else "http"
            rest = bare.split("_interceptor_", 1)[1].lstrip("/")
            host, _, tail = rest.partition("/")
            target = f"{scheme}://{urllib.parse.unquote(host)}/{tail}" + (f"?{query}" if query else "")
        self.calls.append({"scheme": path[:300], "target": target})
        method = request.get_http_method()
        h = Headers()
        for k, v in headers.items():
            h.set(k, v)

        def finish(out):
            from gi.repository import Gio, GLib, Soup, WebKit2
            kind, value = out
            if kind != "ok":
                request.finish_error(GLib.Error.new_literal(GLib.quark_from_string("lab"), value, 1))
                return
            status, resp_headers, data, _final = value
            response = WebKit2.URISchemeResponse.new(Gio.MemoryInputStream.new_from_bytes(GLib.Bytes.new(data)), len(data))
            response.set_status(status, None)
            mh = Soup.MessageHeaders.new(Soup.MessageHeadersType.RESPONSE)
            for k, v in resp_headers:
                if k.lower() == "content-type":
                    response.set_content_type(v)
                if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                    mh.append(k, v)
            response.set_http_headers(mh)
            request.finish_with_response(response)
        in_thread(lambda: url_session(method, target, h, body or None), finish)
        return True


# ---------------------------------------------------------------------------------------
# flutter_inappwebview: the JavaScript lives in Swift string literals.

FIA_VERSIONS = ["5.8.0", "6.0.0", "6.1.5"]
FIA_FILES = ["JavaScriptBridgeJS.swift", "InterceptAjaxRequestJS.swift", "InterceptFetchRequestJS.swift", "PluginScriptsUtil.swift"]

# Constants the scripts interpolate that live in other Swift files of the plugin (not in
# the shared folder), with their values at these tags.
FIA_EXTERNAL = {
    "WEB_MESSAGE_CHANNELS_VARIABLE_NAME": "window.flutter_inappwebview._webMessageChannels",  # WebMessageChannelJS.swift
    "WINDOW_ID_VARIABLE_JS_SOURCE": "window._flutter_inappwebview_windowId",  # WindowIdJS.swift
    "WEB_MESSAGE_LISTENER_JS_SOURCE": "",  # WebMessageListenerJS.swift: the WebMessageListener class, unused by the interceptors
}


def fia_files(version):
    base = "ios/Classes/PluginScriptsJS/" if vkey(version) < (6, 0, 0) else "flutter_inappwebview_ios/ios/Classes/PluginScriptsJS/"
    return [{"local": f"flutter_inappwebview/{version}/{name}", "repository": "pichillilorenzo/flutter_inappwebview", "tag": f"v{version}", "path": base + name}
            for name in FIA_FILES]


def swift_literals(text):
    """Every `let NAME = "..."` and `let NAME = \"\"\"...\"\"\"` in a Swift file, raw (escapes
    and interpolations still in)."""
    out = {}
    for m in re.finditer(r'(?m)^\s*(?:public\s+static\s+)?let\s+(\w+)\s*=\s*"""\n(.*?)\n\s*"""', text, re.S):
        out[m.group(1)] = m.group(2)
    for m in re.finditer(r'(?m)^\s*(?:public\s+static\s+)?let\s+(\w+)\s*=\s*"((?:[^"\\\n]|\\.)*)"\s*;?\s*$', text):
        out.setdefault(m.group(1), m.group(2))
    return out


def swift_string(raw, constants, depth=0):
    """A Swift string literal's value: \\( NAME ) interpolated from the constants, as the Swift
    code does at that tag, and the escapes \\\\ \\" \\n \\t \\r \\' \\0 undone."""
    out, i = [], 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            n = raw[i + 1]
            if n == "(":
                j, level = i + 2, 1
                while level:
                    level += {"(": 1, ")": -1}.get(raw[j], 0)
                    j += 1
                name = raw[i + 2:j - 1].strip()
                if name in FIA_EXTERNAL:
                    out.append(FIA_EXTERNAL[name])
                elif name in constants and depth < 10:
                    out.append(swift_string(constants[name], constants, depth + 1))
                else:
                    raise KeyError(f"unresolved Swift interpolation \\({name})")
                i = j
                continue
            out.append({"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


class FlutterNative(Native):
    def __init__(self, version, urls, received):
        super().__init__({
            "framework": "flutter_inappwebview", "version": version, "files": fia_files(version),
            "native": "the JavaScript extracted from the Swift string literals and interpolated as the Swift code does at the tag "
                      "(constants from other plugin files: " + ", ".join(f"{k}={v!r}" for k, v in FIA_EXTERNAL.items()) + "); "
                      "the Dart side stands in as an app whose shouldInterceptAjaxRequest / shouldInterceptFetchRequest return the "
                      "request unchanged (action PROCEED) and whose other handlers return null; settings useShouldInterceptAjaxRequest "
                      "and useShouldInterceptFetchRequest on, interceptOnlyAsyncAjaxRequests at its default (true).",
        }, urls, received)
        self.version = version
        constants = {}
        for name in FIA_FILES:
            constants.update(swift_literals(read(f"flutter_inappwebview/{version}/{name}")))
        self.constants = constants
        self.sources = {name: swift_string(constants[name], constants) for name in
                        ("JAVASCRIPT_BRIDGE_JS_SOURCE", "INTERCEPT_AJAX_REQUEST_JS_SOURCE", "INTERCEPT_FETCH_REQUEST_JS_SOURCE")}
        # The bridge's callHandler at the tag keeps either the resolve function (5.x) or {resolve, reject} (6.x).
        self.resolve_object = "{resolve: resolve" in self.sources["JAVASCRIPT_BRIDGE_JS_SOURCE"]

    def user_scripts(self):
        # PluginScript(... injectionTime: .atDocumentStart, forMainFrameOnly: false): the
        # bridge first, then the interceptors (InAppWebView.prepareAndAddUserScripts order).
        scripts = [(self.sources["JAVASCRIPT_BRIDGE_JS_SOURCE"], False)]
        if "FLAG_VARIABLE_FOR_INTERCEPT_ONLY_ASYNC_AJAX_REQUESTS_JS_SOURCE" in self.constants:
            # createInterceptOnlyAsyncAjaxRequestsPluginScript(onlyAsync: true), 6.x.
            flag = swift_string(self.constants["FLAG_VARIABLE_FOR_INTERCEPT_ONLY_ASYNC_AJAX_REQUESTS_JS_SOURCE"], self.constants)
            scripts.append((f"{flag} = true;", False))
        scripts.append((self.sources["INTERCEPT_AJAX_REQUEST_JS_SOURCE"], False))
        scripts.append((self.sources["INTERCEPT_FETCH_REQUEST_JS_SOURCE"], False))
        return scripts

    def handlers(self):
        return ["callHandler"]  # JAVASCRIPT_BRIDGE_JS_PLUGIN_SCRIPT's messageHandlerNames

    def message(self, name, body_json):
        # InAppWebView.userContentController(_:didReceive:) for "callHandler": the handler's
        # arguments go to Dart; Dart's answer resolves window.flutter_inappwebview[_callHandlerID].
        msg = json.loads(body_json) if body_json else {}
        handler = msg.get("handlerName")
        try:
            args = json.loads(msg.get("args") or "[]")
        except ValueError:
            args = []
        self.calls.append({"handlerName": handler, "args": args[:1]})
        answer = None
        if handler in ("shouldInterceptAjaxRequest", "shouldInterceptFetchRequest") and args:
            answer = dict(args[0], action=1)  # the request, returned unchanged: PROCEED
        target = f"window.flutter_inappwebview[{json.dumps(msg.get('_callHandlerID'))}]"
        call = f"{target}.resolve({json.dumps(answer)})" if self.resolve_object else f"{target}({json.dumps(answer)})"
        self.js(f"if ({target} != null) {{ {call}; delete {target}; }}")


# ---------------------------------------------------------------------------------------
# KKJSBridge AjaxHook

KK_VERSION = "1.3.9"


def kk_files():
    return [{"local": f"kkjsbridge/{KK_VERSION}/KKJSBridgeAJAXHook.js", "repository": "karosLi/KKJSBridge", "tag": KK_VERSION,
             "path": "KKJSBridge/KKJSBridge/JS/KKJSBridgeAJAXHook.js"}]


class KKNative(Native):
    def __init__(self, urls, received):
        super().__init__({
            "framework": "KKJSBridge", "version": KK_VERSION, "files": kk_files(),
            "native": "stand-ins follow KKJSBridgeXMLHttpRequest.m (open, setRequestHeader, send, returnReadySate) at commit 18613be "
                      "and KKJSBridgeAjaxBodyHelper.m (setBodyRequest, dataFromBase64, setFormData) at commit 1e4d8ec, the versions the "
                      "code index holds (not the 1.3.9 tag; neither file is in the shared folder); the multipart body is written as "
                      "KKJSBridgeURLRequestSerialization (AFNetworking's) does. The ajax hook is switched on as KKJSBridgeConfig's "
                      "enableAjaxHook does, by window.KKJSBridgeConfig.enableAjaxHook(true), here at document start.",
        }, urls, received)
        self.xhrs = {}

    def user_scripts(self):
        return [(read(f"kkjsbridge/{KK_VERSION}/KKJSBridgeAJAXHook.js"), True), ("window.KKJSBridgeConfig.enableAjaxHook(true);", True)]

    def handlers(self):
        return ["KKJSBridgeMessage"]  # callNative: window.webkit.messageHandlers.KKJSBridgeMessage

    def message(self, name, body_json):
        msg = json.loads(body_json) if body_json else {}
        data = msg.get("data") or {}
        record = {"module": msg.get("module"), "method": msg.get("method")}
        if msg.get("method") == "send":
            value = data.get("value")
            record.update(bodyType=data.get("bodyType"), formEnctype=data.get("formEnctype"),
                          value=(value[:200] if isinstance(value, str) else value))
        self.calls.append(record)
        if msg.get("module") != "ajax":
            return
        xid = data.get("id")
        x = self.xhrs.setdefault(xid, {"headers": Headers()})
        method = msg.get("method")
        if method == "open":
            # open:url:userAgent:referer: the request, with the page's user agent and referer.
            x.update(method=(data.get("method") or "GET").upper(), url=urllib.parse.urljoin(data.get("href") or "", data.get("url") or ""))
            x["headers"].set("User-Agent", data.get("useragent") or "")
            if data.get("referer"):
                x["headers"].set("Referer", data["referer"])
            self.set_properties({"id": xid, "readyState": 1, "status": 200, "statusText": "", "ajaxType": 1})
        elif method == "setRequestHeader":
            x["headers"].set(data.get("headerName"), data.get("headerValue"))
        elif method == "send":
            body, extra = self.body(data)
            for k, v in extra:
                x["headers"].set(k, v)
            in_thread(lambda: url_session(x["method"], x["url"], x["headers"], body), lambda out: self.done(xid, out))

    def prompt(self, message, default):
        # syncCall: window.prompt("KKJSBridge", JSON) answered synchronously
        # (KKJSBridgeSyncMessageDispatcher): a synchronous send returns its properties.
        if message != "KKJSBridge":
            return None
        msg = json.loads(default or "{}")
        data = msg.get("data") or {}
        if msg.get("module") == "ajax" and msg.get("method") == "send":
            x = self.xhrs.get(data.get("id"), {"headers": Headers(), "method": "GET", "url": ""})
            body, extra = self.body(data)
            for k, v in extra:
                x["headers"].set(k, v)
            try:
                return json.dumps(self.properties(data.get("id"), url_session(x["method"], x["url"], x["headers"], body)))
            except Exception as e:  # noqa: BLE001
                return json.dumps({"id": data.get("id"), "readyState": 4, "status": 0, "statusText": str(e)})
        return "null"

    @staticmethod
    def from_base64(value):
        # KKJSBridgeAjaxBodyHelper dataFromBase64: "data:...;base64,XXXX" split at ",", exactly
        # two parts or nil; padded; decoded ignoring unknown characters.
        parts = value.split(",")
        if len(parts) != 2:
            return None
        s = parts[1]
        s = s + "=" * (len(s) % 4)
        s = re.sub(r"[^A-Za-z0-9+/=]", "", s)
        try:
            return base64.b64decode(s[: len(s) - len(s) % 4] if len(s) % 4 else s)
        except ValueError:
            return None

    def body(self, data):
        """KKJSBridgeAjaxBodyHelper setBodyRequest:toRequest:. Returns (bytes or None, extra headers)."""
        body_type, value = data.get("bodyType"), data.get("value")
        if value is None:
            return None, []
        if body_type in ("Blob", "ArrayBuffer"):
            return self.from_base64(value), []
        if body_type == "FormData":
            return self.form_data(value, data.get("formEnctype"))
        if isinstance(value, dict):
            return json.dumps(value, separators=(",", ":")).encode(), []
        if isinstance(value, str):
            return value.encode(), []
        return None, []

    def form_data(self, form, enctype):
        file_keys = form.get("fileKeys") or []
        params, files = [], []
        for pair in form.get("formData") or []:
            if len(pair) < 2:
                continue
            key = pair[0]
            if key in file_keys:
                f = pair[1]
                name = f.get("name") or key
                if enctype == "multipart/form-data":
                    files.append((key, name, f.get("type"), self.from_base64(f["data"]) if isinstance(f.get("data"), str) else b""))
                else:
                    params.append((key, name))
            else:
                params.append((key, str(pair[1])))
        if enctype == "multipart/form-data":
            boundary = "Boundary+" + uuid.uuid4().hex[:16].upper()
            parts = [f"Content-Disposition: form-data; name=\"{k}\"\r\n\r\n".encode() + v.encode() for k, v in params]
            parts += [f"Content-Disposition: form-data; name=\"{k}\"; filename=\"{n}\"\r\nContent-Type: {t}\r\n\r\n".encode() + (d or b"") for k, n, t, d in files]
            body = f"--{boundary}\r\n".encode() + f"\r\n--{boundary}\r\n".encode().join(parts) + f"\r\n--{boundary}--\r\n".encode()
            return body, [("Content-Type", f"multipart/form-data; boundary={boundary}")]
        sep = "\r\n" if enctype == "text/plain" else "&"
        return sep.join(f"{urllib.parse.quote(k, safe='')}={urllib.parse.quote(v, safe='')}" for k, v in params).encode(), []

    @staticmethod
    def properties(xid, value):
        status, headers, data, _final = value
        return {"id": xid, "readyState": 4, "status": status, "statusText": "OK", "ajaxType": 1,
                "headers": {k: v for k, v in headers}, "responseText": data.decode("utf-8", "replace")}

    def set_properties(self, props):
        # evaluateJSToSetAjaxProperties, at 1.3.9 window._KKJSBridgeXHR.setProperties.
        self.js(f"window._KKJSBridgeXHR.setProperties({json.dumps(props)})")

    def done(self, xid, out):
        kind, value = out
        if kind != "ok":
            self.set_properties({"id": xid, "readyState": 4, "status": 0, "statusText": value, "ajaxType": 1})
            return
        status, headers, _data, _final = value
        self.set_properties({"id": xid, "readyState": 2, "status": status, "statusText": "OK", "ajaxType": 1, "headers": {k: v for k, v in headers}})
        self.set_properties(self.properties(xid, value))


# ---------------------------------------------------------------------------------------
# What the checks read.

def hits(r, path, at="api", method=None):
    return [x for x in r["received"] if x["at"] == at and x["path"].split("?")[0] == path and (method is None or x["method"] == method)]


def raw(hit):
    return base64.b64decode(hit.get("bodyBase64", "")) if hit else b""


def sent_by(hit, r):
    return "native" if [hit["method"], hit["path"].split("?")[0]] in (r.get("bridge") or {}).get("sentNatively", []) else "WebKit"


def saw(r, key):
    return (r.get("saw") or {}).get(key) or {}


def describe_body(r, path):
    """What the server got for one request: not sent, no body, {}, an object of indices, or
    the text of the bytes."""
    h = hits(r, path)
    if not h:
        return "not sent"
    body = raw(h[0])
    if not body:
        return "no body"
    try:
        parsed = json.loads(body)
    except ValueError:
        return f"{len(body)} bytes: {body[:40]!r}"
    if parsed == {}:
        return "{}"
    if isinstance(parsed, dict) and parsed and all(k.isdigit() for k in parsed):
        return "an object of indices"
    if parsed == {"a": 1}:
        return "the bytes as text"
    return f"JSON {body[:40]!r}"


def multipart_boundary(content_type):
    m = re.search(r"boundary=\"?([^\";]+)", content_type or "")
    return m.group(1).strip() if m else None


def multipart_consistent(hit):
    """The body's delimiter lines use the boundary of its Content-Type."""
    b = multipart_boundary(hit["headers"].get("content-type"))
    return bool(b) and (b"--" + b.encode()) in raw(hit)


# ---------------------------------------------------------------------------------------
# The experiments.

JSON_TEXT_BYTES = "[123, 34, 97, 34, 58, 49, 125]"  # the UTF-8 bytes of {"a":1}

API_ROUTES = {
    "GET /data": (200, [("Content-Type", "text/plain")], "plain data"),  # no Access-Control-Allow-Origin
    "POST /post": (307, [("Location", "/post-final")], ""),
    "POST /post-final": (200, [("Content-Type", "text/plain")], "posted"),
}


def add(experiment, check):
    """Registers every framework experiment with experiments.py's `experiment`."""
    for version in CAPACITOR_VERSIONS:
        add_capacitor(experiment, check, version)
    for version in FIA_VERSIONS:
        add_flutter(experiment, check, version)
    add_kkjsbridge(experiment, check)


def runs_with(files, factory):
    return {"missing": lambda: missing_note(files), "native": factory}


def add_capacitor(experiment, check, v):
    files = capacitor_files(v)
    common = dict(pageAt="app", api=dict(API_ROUTES), timeout=15, **runs_with(files, lambda urls, received, v=v: CapacitorNative(v, urls, received)))
    label = f"Capacitor {v}'s native-bridge.js with CapacitorHttp on"
    rewrites = holds("CAPH1", "capacitor", v)  # the GET rewrite through the scheme handler (PR #6818, from 5.7.1)

    # CAPH3: an XHR's FormData, the page setting no Content-Type.
    caph3_holds = holds("CAPH3", "capacitor", v)

    def caph3(r):
        h = hits(r, "/form")
        if not h:
            got = "not sent"
        elif not raw(h[0]):
            got = "no body" + (", no Content-Type" if "content-type" not in h[0]["headers"] else f", Content-Type {h[0]['headers']['content-type'][:40]}")
        else:
            got = "multipart body with its Content-Type" if multipart_consistent(h[0]) and b"Trip" in raw(h[0]) else f"{len(raw(h[0]))} bytes, Content-Type {h[0]['headers'].get('content-type', 'none')[:40]}"
        return [check("CAPH3", f"{v}: an XHR's FormData (no Content-Type set by the page) reaches the server",
                      "no body, no Content-Type" if caph3_holds else "multipart body with its Content-Type", got)]
    experiment(id=f"capacitor-http-xhr-formdata@{v}", rules=["CAPH3"], title=f"{label}: an XHR POSTs a FormData of two fields to an HTTP API", **common,
               script="""
  const fd = new FormData(); fd.append('title', 'Trip'); fd.append('n', '2');
  results.form = await xhr("POST", urls.api + "/form", fd);
""", checks=caph3)

    # CAPH4: binary bodies. A Uint8Array is sent too, and what arrives kept in the result,
    # but not checked: CAPH4 speaks of the Blob and ArrayBuffer a recording's scenario names.
    def caph4(r):
        out = []
        for send in ("fetch", "xhr"):
            out += [
                check("CAPH4", f"{v}: {send} ArrayBuffer with Content-Type application/json", "{}", describe_body(r, f"/{send}-buffer-json")),
                check("CAPH4", f"{v}: {send} Blob with Content-Type application/json", "{}", describe_body(r, f"/{send}-blob-json")),
                check("CAPH4", f"{v}: {send} ArrayBuffer without a Content-Type", "no body", describe_body(r, f"/{send}-buffer-none")),
                check("CAPH4", f"{v}: {send} ArrayBuffer with Content-Type application/octet-stream", "not sent", describe_body(r, f"/{send}-buffer-octet")),
            ]
        return out
    experiment(id=f"capacitor-http-binary@{v}", rules=["CAPH4"], title=f"{label}: fetch and XHR POST a Uint8Array, an ArrayBuffer and a Blob, with and without a Content-Type", **common,
               script=f"""
  const json = {{"Content-Type": "application/json"}};
  const bytes = () => new Uint8Array({JSON_TEXT_BYTES});
  for (const [send, fn] of [["fetch", fetchIt], ["xhr", xhr]]) {{
    results[send + "TypedJson"] = await fn("POST", urls.api + "/" + send + "-typed-json", bytes(), {{headers: json}});
    results[send + "BufferJson"] = await fn("POST", urls.api + "/" + send + "-buffer-json", bytes().buffer, {{headers: json}});
    results[send + "BlobJson"] = await fn("POST", urls.api + "/" + send + "-blob-json", new Blob([bytes()]), {{headers: json}});
    results[send + "BufferNone"] = await fn("POST", urls.api + "/" + send + "-buffer-none", bytes().buffer);
    results[send + "BufferOctet"] = await Promise.race([fn("POST", urls.api + "/" + send + "-buffer-octet", bytes().buffer, {{headers: {{"Content-Type": "application/octet-stream"}}}}), sleep(2000).then(() => ({{error: "no answer"}}))]);
  }}
""", checks=caph4)

    # CAPH1: GETs to an absolute URL.
    def caph1(r):
        at_handler = [x for x in r["received"] if x["at"] == "handler" and x["path"].startswith("/_capacitor_http")]
        paths = sorted({x["path"].split("?")[0].split("/")[1] for x in at_handler})
        server = hits(r, "/data", method="GET")
        return [
            check("CAPH1", f"{v}: a fetch GET and an XHR GET to http://127.0.0.1 go to the app scheme's interceptor path",
                  "/_capacitor_http_interceptor_" if rewrites else "over the bridge (no rewrite)",
                  ("/" + ", /".join(paths)) if paths else ("over the bridge (no rewrite)" if any(c.get("pluginId") == "CapacitorHttp" for c in (r.get("bridge") or {}).get("calls", [])) else "neither")),
            check("CAPH1", f"{v}: the server gets both GETs, with no preflight", "2 GETs, no OPTIONS",
                  f"{len(server)} GETs, {'OPTIONS' if hits(r, '/data', method='OPTIONS') else 'no OPTIONS'}"),
            check("CAPH1", f"{v}: the page reads the answers, which carry no Access-Control-Allow-Origin (no CORS)", "read",
                  "read" if saw(r, "fetchGet").get("text") == "plain data" and saw(r, "xhrGet").get("text") == "plain data" else f"{saw(r, 'fetchGet')} / {saw(r, 'xhrGet')}"[:80]),
        ]
    experiment(id=f"capacitor-http-get@{v}", rules=["CAPH1"], title=f"{label}: fetch and XHR GET an absolute URL on an HTTP API that sends no CORS headers, with a custom header", **common,
               script="""
  results.fetchGet = await fetchIt("GET", urls.api + "/data", undefined, {headers: {"X-Token": "t"}});
  results.xhrGet = await xhr("GET", urls.api + "/data", undefined, {headers: {"X-Token": "t"}});
""", checks=caph1)

    # CAPH2: other methods over the bridge.
    def caph2(r):
        final = hits(r, "/post-final", method="POST")
        return [
            check("CAPH2", f"{v}: a fetch POST and an XHR POST reach the server from the native side, bodies whole, after a 307",
                  "2 native POSTs with their bodies",
                  f"{len(final)} {'/'.join(sorted({sent_by(h, r) for h in final})) or 'no'} POSTs" + (" with their bodies" if final and all(raw(h) in (b'{"a":1}', b"plain text") for h in final) and len(final) == 2 else "")),
            check("CAPH2", f"{v}: no preflight though the request is cross-origin with a custom header", "no OPTIONS",
                  "OPTIONS" if any(x["method"] == "OPTIONS" for x in r["received"] if x["at"] == "api") else "no OPTIONS"),
            check("CAPH2", f"{v}: the page is given the final URL (Response.url, responseURL)", "/post-final",
                  "/post-final" if str(saw(r, "fetchPost").get("url", "")).endswith("/post-final") and str(saw(r, "xhrPost").get("url", "")).endswith("/post-final")
                  else f"{saw(r, 'fetchPost').get('url')} / {saw(r, 'xhrPost').get('url')}"),
        ]
    experiment(id=f"capacitor-http-post@{v}", rules=["CAPH2"], title=f"{label}: fetch and XHR POST to an HTTP API that answers 307, with a custom header", **common,
               script="""
  results.fetchPost = await fetchIt("POST", urls.api + "/post", '{"a":1}', {headers: {"Content-Type": "application/json", "X-Token": "t"}});
  results.xhrPost = await xhr("POST", urls.api + "/post", "plain text", {headers: {"Content-Type": "text/plain", "X-Token": "t"}});
""", checks=caph2)

    # CAPH5: a fetch's FormData with a file.
    def caph5(r):
        h = hits(r, "/upload")
        if not h:
            return [check("CAPH5", f"{v}: a fetch's FormData with a file reaches the server rebuilt", "rebuilt", "not sent")]
        body = raw(h[0])
        return [
            check("CAPH5", f"{v}: a fetch's FormData with a file reaches the server rebuilt natively", "rebuilt, file part with Content-Transfer-Encoding: binary",
                  ("rebuilt, file part with Content-Transfer-Encoding: binary" if b"Content-Transfer-Encoding: binary" in body else "WebKit's own bytes" if b"WebKitFormBoundary" in body and sent_by(h[0], r) == "WebKit" else "rebuilt otherwise")),
            check("CAPH5", f"{v}: the same field and file bytes, under the Content-Type's boundary", "same fields, boundary consistent",
                  "same fields, boundary consistent" if b"Trip" in body and b"\xff\xd8\x01\x02\x03" in body and multipart_consistent(h[0]) else
                  f"field {'kept' if b'Trip' in body else 'lost'}, file {'kept' if bytes([0xFF, 0xD8, 1, 2, 3]) in body else 'lost'}, boundary {'consistent' if multipart_consistent(h[0]) else 'inconsistent'}"),
        ]
    experiment(id=f"capacitor-http-multipart@{v}", rules=["CAPH5"], title=f"{label}: a fetch POSTs a FormData with a field and a JPEG file", **common,
               script="""
  const ff = new FormData(); ff.append('title', 'Trip'); ff.append('photo', fileOf([0xFF, 0xD8, 1, 2, 3], 'a.jpg', 'image/jpeg'));
  results.upload = await fetchIt("POST", urls.api + "/upload", ff);
""", checks=caph5)


def add_flutter(experiment, check, v):
    files = fia_files(v)
    common = dict(pageAt="api", timeout=15, **runs_with(files, lambda urls, received, v=v: FlutterNative(v, urls, received)))
    label = f"flutter_inappwebview {v}'s interceptors (ajax and fetch interception on, the Dart handlers returning the request)"
    fia2_holds = holds("FIA2", "flutter_inappwebview", v)
    fia3_holds = holds("FIA3", "flutter_inappwebview", v)

    def fia2(r):
        h = hits(r, "/fetch-form")
        ct = h[0]["headers"].get("content-type", "none") if h else "not sent"
        p = hits(r, "/fetch-params")
        pct = p[0]["headers"].get("content-type", "none") if p else "not sent"
        return [
            check("FIA2", f"{v}: a fetch's FormData reaches the server with a multipart Content-Type whose boundary is the body's",
                  "Content-Type lost" if fia2_holds else "Content-Type arrives",
                  ("Content-Type arrives" if multipart_consistent(h[0]) else f"Content-Type {ct[:60]}") if h else "not sent"),
            check("FIA3", f"{v}: a fetch's URLSearchParams body reaches the server typed", "text/plain;charset=UTF-8" if fia3_holds else "none" if fia2_holds else "application/x-www-form-urlencoded;charset=UTF-8", pct),
        ]
    experiment(id=f"fia-fetch-formdata@{v}", rules=["FIA2", "FIA3"], title=f"{label}: fetch POSTs a FormData and a URLSearchParams, setting no Content-Type", **common,
               script="""
  const fd = new FormData(); fd.append('title', 'Trip'); fd.append('n', '2');
  results.form = await fetchIt("POST", urls.api + "/fetch-form", fd);
  results.params = await fetchIt("POST", urls.api + "/fetch-params", new URLSearchParams("a=1&b=two"));
""", checks=fia2)

    def fia1(r):
        calls = (r.get("bridge") or {}).get("calls", [])
        seen = sorted({c.get("handlerName") for c in calls if c.get("handlerName") in ("shouldInterceptAjaxRequest", "shouldInterceptFetchRequest")})
        out = [check("FIA1", f"{v}: the Dart side is handed both requests", "shouldInterceptAjaxRequest, shouldInterceptFetchRequest", ", ".join(seen) or "none")]
        for path, what, expect in (("/xhr-text", "an XHR's string body", b"hello world"), ("/fetch-bytes", "a fetch's Uint8Array body", bytes([1, 2, 3, 4])),
                                   ("/xhr-form", "an XHR's FormData", None)):
            h = hits(r, path)
            if not h:
                got = "not sent"
            else:
                same = (raw(h[0]) == expect) if expect is not None else (b"Trip" in raw(h[0]) and multipart_consistent(h[0]))
                got = f"sent by {sent_by(h[0], r)}, {'same bytes' if same else 'other bytes'}, cookie {'carried' if 'webjar=1' in h[0]['headers'].get('cookie', '') else 'missing'}"
            out.append(check("FIA1", f"{v}: {what} is then sent by WebKit itself, with the same bytes (a FormData with its boundary) and WebJar's cookie",
                             "sent by WebKit, same bytes, cookie carried", got))
        return out
    experiment(id=f"fia-xhr-fetch-observed@{v}", rules=["FIA1"], title=f"{label}: a cookie written by the page, then XHR and fetch POSTs", **common,
               script="""
  document.cookie = "webjar=1; path=/";
  results.text = await xhr("POST", urls.api + "/xhr-text", "hello world");
  results.bytes = await fetchIt("POST", urls.api + "/fetch-bytes", new Uint8Array([1, 2, 3, 4]));
  const fd = new FormData(); fd.append('title', 'Trip');
  results.form = await xhr("POST", urls.api + "/xhr-form", fd);
""", checks=fia1)


def add_kkjsbridge(experiment, check):
    v = KK_VERSION
    files = kk_files()
    api = {"GET /bin": (200, [("Content-Type", "application/octet-stream")], bytes([0, 1, 2, 250, 251]))}

    def kk(r):
        calls = [c for c in (r.get("bridge") or {}).get("calls", []) if c.get("method") == "send"]

        def posted(kind):
            c = [x for x in calls if x.get("bodyType") == kind]
            if not c:
                return "not posted"
            val = c[0].get("value")
            if isinstance(val, str):
                return "a data URL (base64)" if val.startswith("data:") else "base64" if re.fullmatch(r"[A-Za-z0-9+/=]+", val) else "text"
            return "JSON with fileKeys " + ",".join((val or {}).get("fileKeys", [])) if isinstance(val, dict) else str(val)[:30]

        def arrived(path, expect):
            h = hits(r, path)
            if not h:
                return "not sent"
            return f"arrives ({sent_by(h[0], r)})" if raw(h[0]) == expect else f"{'no body' if not raw(h[0]) else 'other bytes'} ({sent_by(h[0], r)})"
        five = bytes([1, 2, 3, 4, 5])
        up = hits(r, "/xhr-form")
        return [
            check("X1", f"{v}: an asynchronous XHR's ArrayBuffer body goes to native base64-encoded", "base64", posted("ArrayBuffer")),
            check("X1", f"{v}: an asynchronous XHR's Blob body goes to native base64-encoded", "a data URL (base64)", posted("Blob")),
            check("X1", f"{v}: a FormData goes as JSON with its file keys marked", "JSON with fileKeys photo", posted("FormData")),
            check("X1", f"{v}: the ArrayBuffer body reaches the server from the native side", "arrives (native)", arrived("/xhr-buffer", five)),
            check("X1", f"{v}: the Blob body reaches the server from the native side", "arrives (native)", arrived("/xhr-blob", five)),
            check("X1", f"{v}: the string body reaches the server from the native side", "arrives (native)", arrived("/xhr-text", b"hello world")),
            check("X1", f"{v}: the FormData's file reaches the server in a multipart body", "file kept",
                  ("file kept" if up and five in raw(up[0]) and multipart_consistent(up[0]) else "file lost") if up else "not sent"),
            check("X2", f"{v}: an XHR with responseType arraybuffer gets an ArrayBuffer", "not an ArrayBuffer", (r.get("saw") or {}).get("binaryResponse", "no report")),
            check("X3", f"{v}: fetch, polyfilled by the library over XMLHttpRequest, goes over the bridge", "over the bridge", arrived("/fetch-text", b"fetched").replace("arrives (native)", "over the bridge").replace("arrives (WebKit)", "WebKit")),
            check("X3", f"{v}: sendBeacon is not hooked: WebKit sends it", "arrives (WebKit)", arrived("/beacon", b"beacon body")),
        ]
    experiment(id=f"kkjsbridge-ajaxhook@{v}", rules=["X1", "X2", "X3"], pageAt="api", api=api, timeout=15, settle=1.0,
               title=f"KKJSBridge {v}'s AjaxHook (ajax hook on): XHR POSTs of an ArrayBuffer, a Blob, a string and a FormData with a file; a binary response; fetch; sendBeacon",
               **runs_with(files, lambda urls, received: KKNative(urls, received)),
               script="""
  const five = () => new Uint8Array([1, 2, 3, 4, 5]);
  results.buffer = await xhr("POST", urls.api + "/xhr-buffer", five().buffer);
  results.blob = await xhr("POST", urls.api + "/xhr-blob", new Blob([five()]));
  results.text = await xhr("POST", urls.api + "/xhr-text", "hello world");
  const ff = new FormData(); ff.append('title', 'Trip'); ff.append('photo', new File([five()], 'a.bin', {type: 'application/octet-stream'}));
  results.form = await xhr("POST", urls.api + "/xhr-form", ff);
  results.binaryResponse = await new Promise(resolve => {
    const x = new XMLHttpRequest(); x.open("GET", urls.api + "/bin"); x.responseType = "arraybuffer";
    x.onload = () => resolve(x.response instanceof ArrayBuffer ? "an ArrayBuffer" : "not an ArrayBuffer");
    x.onerror = () => resolve("error"); x.send(); setTimeout(() => resolve("no answer"), 3000);
  });
  results.fetched = await Promise.race([fetchIt("POST", urls.api + "/fetch-text", "fetched"), sleep(3000).then(() => ({error: "no answer"}))]);
  results.beacon = navigator.sendBeacon(urls.api + "/beacon", "beacon body");
  await sleep(500);
""", checks=kk)
