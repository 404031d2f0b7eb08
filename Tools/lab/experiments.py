"""The lab's experiments: each one page and one handler, and what the model predicts.

An experiment names the rules it measures, where its page lives (`app`: the custom scheme
`h5r://app`, standing in for a WKURLSchemeHandler; `api`: http://127.0.0.1:PORT; `other`:
http://localhost:PORT, another site), the page's script, how the handler and the origins
answer (`"METHOD /path": (status, headers, body)`, `*` for any method; `{api}`, `{other}`,
`{app}` in a header or body become the origins' URLs), and checks: for each rule, what the
model predicts, what the engine did, and whether they agree.

The script runs in an async function with helpers: `xhr(method, url, body, options)` and
`ajax(...)`, `fetchIt(method, url, body, options)`, each resolving to what the page saw
(`status`, `url`, `redirected`, `text`, or `error`), `sleep(ms)`, `urls` and `results`
(what the page reports).
"""
import json

# ---------------------------------------------------------------------------------------
# The page around an experiment's script.

HELPERS = r"""
const results = {};
const sleep = ms => new Promise(r => setTimeout(r, ms));
function xhr(method, url, body, options) {
  options = options || {};
  return new Promise(resolve => {
    try {
      const x = new XMLHttpRequest();
      x.open(method, url, options.sync ? false : true);
      if (options.withCredentials) x.withCredentials = true;
      for (const [k, v] of Object.entries(options.headers || {})) x.setRequestHeader(k, v);
      if (options.uploadListener) x.upload.onprogress = () => {};
      x.onload = () => resolve({status: x.status, url: x.responseURL, text: x.responseText.slice(0, 200)});
      x.onerror = () => resolve({error: "network error", status: x.status});
      x.send(body === undefined ? null : body);
      if (options.sync) resolve({status: x.status, url: x.responseURL, text: x.responseText.slice(0, 200)});
    } catch (e) { resolve({error: String(e)}); }
  });
}
async function fetchIt(method, url, body, options) {
  options = options || {};
  try {
    const init = {method, headers: options.headers || {}, credentials: options.credentials || "same-origin", redirect: options.redirect || "follow"};
    if (body !== undefined) init.body = body;
    if (options.duplex) init.duplex = options.duplex;
    if (options.keepalive) init.keepalive = true;
    const r = await fetch(url, init);
    return {status: r.status, url: r.url, redirected: r.redirected, type: r.type, text: (await r.text()).slice(0, 200)};
  } catch (e) { return {error: String(e)}; }
}
function fileOf(bytes, name, type) { return new File([new Uint8Array(bytes)], name, {type}); }
"""


def page(spec, urls):
    script = spec["script"]
    body = f"""<!doctype html><html><head><meta charset=utf-8><title>{spec['id']}</title></head><body>
{spec.get('html', '')}
<script>
const urls = {json.dumps(urls)};
{HELPERS}
(async () => {{
  try {{
{script}
  }} catch (e) {{ results.error = String(e); }}
  window.webkit.messageHandlers.lab.postMessage(JSON.stringify(results));
}})();
</script></body></html>"""
    return body.encode()


def fill(text, urls):
    for name, url in urls.items():
        text = text.replace("{" + name + "}", url)
    return text


def answer(routes, method, path, urls):
    """The handler's or origin's answer to `method path`: an exact route, then `* path`, then
    the path without its query; otherwise 200 `ok`."""
    bare = path.split("?", 1)[0]
    for key in (f"{method} {path}", f"* {path}", f"{method} {bare}", f"* {bare}"):
        if key in routes:
            status, headers, body = routes[key]
            headers = [(k, fill(v, urls)) for k, v in headers]
            if isinstance(body, str):
                body = fill(body, urls).encode()
            return status, headers, body
    return 200, [("Content-Type", "text/plain")], b"ok"


# ---------------------------------------------------------------------------------------
# What the checks read from a result.

def arrivals(result, at, path=None, method=None):
    return [r for r in result["received"] if r["at"] == at and (path is None or r["path"].split("?")[0] == path)
            and (method is None or r["method"] == method)]


def body_at(result, at, path):
    hits = arrivals(result, at, path)
    if not hits:
        return "no request"
    return f"{hits[0]['bodyLength']} bytes"


def check(rule, what, predicted, observed):
    return {"rule": rule, "what": what, "predicted": predicted, "observed": observed, "agree": predicted == observed}


# ---------------------------------------------------------------------------------------
# The experiments.

FORM_FIELDS = "const fd = new FormData(); fd.append('title', 'Trip'); fd.append('n', '2');"
FORM_FILE = "const ff = new FormData(); ff.append('title', 'Trip'); ff.append('photo', fileOf([0xFF, 0xD8, 1, 2, 3], 'a.jpg', 'image/jpeg'));"

EXPERIMENTS = []


def experiment(**spec):
    EXPERIMENTS.append(spec)
    return spec


def bodies_checks(result, transport):
    """S2, S3: what the handler receives per body type."""
    r = result
    out = [
        check("S3", f"{transport} string body reaches the handler", "arrives", "arrives" if body_at(r, "handler", "/string") == "11 bytes" else body_at(r, "handler", "/string")),
        check("S3", f"{transport} FormData (fields) reaches the handler with its boundary", "arrives",
              "arrives" if arrivals(r, "handler", "/formdata") and "WebKitFormBoundary" in arrivals(r, "handler", "/formdata")[0]["body"] else body_at(r, "handler", "/formdata")),
        check("S3", f"{transport} URLSearchParams body reaches the handler", "arrives", "arrives" if body_at(r, "handler", "/params") == "9 bytes" else body_at(r, "handler", "/params")),
        check("S3", f"{transport} ArrayBuffer body reaches the handler", "arrives", "arrives" if body_at(r, "handler", "/arraybuffer") == "4 bytes" else body_at(r, "handler", "/arraybuffer")),
        check("S3", f"{transport} typed array body reaches the handler", "arrives", "arrives" if body_at(r, "handler", "/typed") == "4 bytes" else body_at(r, "handler", "/typed")),
    ]
    return out


BODY_SCRIPT = """
  results.string = await SEND("POST", urls.app + "/string", "hello world");
  results.params = await SEND("POST", urls.app + "/params", new URLSearchParams("a=1&b=two"));
  """ + FORM_FIELDS + """
  results.formdata = await SEND("POST", urls.app + "/formdata", fd);
  results.arraybuffer = await SEND("POST", urls.app + "/arraybuffer", new Uint8Array([1, 2, 3, 4]).buffer);
  results.typed = await SEND("POST", urls.app + "/typed", new Uint8Array([5, 6, 7, 8]));
"""

experiment(
    id="handler-bodies-xhr", rules=["S3"], pageAt="app",
    title="XHR POST bodies by JavaScript type to the scheme handler",
    script=BODY_SCRIPT.replace("SEND", "xhr"),
    checks=lambda r: bodies_checks(r, "XHR"),
)

experiment(
    id="handler-bodies-fetch", rules=["S3"], pageAt="app",
    title="fetch POST bodies by JavaScript type to the scheme handler",
    script=BODY_SCRIPT.replace("SEND", "fetchIt"),
    checks=lambda r: bodies_checks(r, "fetch"),
)

def blob_delivery(r, path):
    """A Blob-backed body: delivered, or not (empty, or the handler crashed reading it)."""
    if r.get("outcome", "ran") != "ran":
        return "not delivered"  # the engine crashed when the handler read the body
    hits = arrivals(r, "handler", path)
    if not hits:
        return "no request"
    return "not delivered" if hits[0]["bodyLength"] == 0 else f"delivered ({hits[0]['bodyLength']} bytes)"


for transport, send in (("XHR", "xhr"), ("fetch", "fetchIt")):
    experiment(
        id=f"handler-blob-{send.replace('It', '')}", rules=["S2"], pageAt="app", crashIsObservation=True,
        title=f"a {transport} posting a Blob to the scheme handler",
        script=f"""
  results.blob = await {send}("POST", urls.app + "/blob", new Blob([new Uint8Array([1, 2, 3, 4, 5])], {{type: "application/octet-stream"}}));
""",
        checks=lambda r, transport=transport: [check("S2", f"a {transport}'s Blob body reaches the handler", "not delivered", blob_delivery(r, "/blob"))],
    )
    experiment(
        id=f"handler-formfile-{send.replace('It', '')}", rules=["S2"], pageAt="app", crashIsObservation=True,
        title=f"a {transport} posting a FormData holding a File to the scheme handler",
        script=FORM_FILE + f"""
  results.formfile = await {send}("POST", urls.app + "/formfile", ff);
""",
        checks=lambda r, transport=transport: [check("S2", f"a {transport}'s FormData with a File reaches the handler", "not delivered", blob_delivery(r, "/formfile"))],
    )

experiment(
    id="handler-upload-listener", rules=["S3"], pageAt="app",
    title="an XHR whose upload object has a listener, posting a string to the scheme handler",
    script="""
  results.listened = await xhr("POST", urls.app + "/listened", "hello world", {uploadListener: true});
""",
    checks=lambda r: [
        check("S3", "with xhr.upload touched, a body still reaches WebKitGTK's handler (its API hands every body over as a stream; HTTPBody against HTTPBodyStream is Cocoa's split)", "arrives as a stream",
              "arrives as a stream" if arrivals(r, "handler", "/listened") and arrivals(r, "handler", "/listened")[0]["bodyLength"] == 11 else body_at(r, "handler", "/listened")),
    ],
)

experiment(
    id="stream-upload", rules=["S4"], pageAt="api",
    title="fetch with a ReadableStream body (duplex: half), to the HTTP origin and to the scheme handler",
    script="""
  const stream = () => new ReadableStream({start(c) { c.enqueue(new TextEncoder().encode("chunk")); c.close(); }});
  results.http = await fetchIt("POST", urls.api + "/stream", stream(), {duplex: "half"});
""",
    checks=lambda r: [
        check("S4", "a ReadableStream upload is refused before anything is sent", "refused",
              "refused" if "error" in (r.get("saw") or {}).get("http", {}) and not arrivals(r, "api", "/stream") else f"sent ({body_at(r, 'api', '/stream')})"),
    ],
)


def redirect_routes(prefix):
    routes = {}
    for code in (301, 302, 303, 307, 308):
        routes[f"* /r{code}"] = (code, [("Location", prefix + f"/after{code}"), ("Content-Type", "text/plain")], "moved")
        routes[f"* /after{code}"] = (200, [("Content-Type", "text/plain"), ("Access-Control-Allow-Origin", "*")], "after")
    return routes


REDIRECT_SCRIPT = """
  for (const code of [301, 302, 303, 307, 308]) {
    results["xhr" + code] = await xhr("POST", BASE + "/r" + code, "body=" + code);
    results["fetch" + code] = await fetchIt("POST", BASE + "/r" + code, "body=" + code);
  }
"""


def followed(r, at, code):
    hops = arrivals(r, at, f"/after{code}")
    if not hops:
        return "not followed"
    h = hops[0]
    return f"followed as {h['method']}" + (" with the body" if h["bodyLength"] > 0 else " without a body")


experiment(
    id="http-redirects", rules=["N1"], pageAt="api",
    title="XHR and fetch POSTs answered by 301, 302, 303, 307 and 308 from the HTTP origin",
    api=redirect_routes("{api}"),
    script=REDIRECT_SCRIPT.replace("BASE", "urls.api"),
    checks=lambda r: [
        check("N1", f"a {code} to a POST is followed by WebKit", expected, followed(r, "api", code))
        for code, expected in ((301, "followed as GET without a body"), (302, "followed as GET without a body"), (303, "followed as GET without a body"),
                               (307, "followed as POST with the body"), (308, "followed as POST with the body"))
    ] + [
        check("N1", "the page learns the final URL (responseURL, fetch's redirected)", "yes",
              "yes" if all((r.get("saw") or {}).get(f"xhr{c}", {}).get("url", "").endswith(f"/after{c}") and (r.get("saw") or {}).get(f"fetch{c}", {}).get("redirected") for c in (302, 307)) else "no"),
    ],
)

experiment(
    id="handler-redirects", rules=["S5"], pageAt="app",
    title="XHR and fetch POSTs answered by 301, 302, 303, 307 and 308 from the scheme handler",
    handler=redirect_routes("{app}"),
    script=REDIRECT_SCRIPT.replace("BASE", "urls.app"),
    checks=lambda r: [
        check("S5", f"a {code} handed to the scheme task is followed", "not followed", followed(r, "handler", code)) for code in (301, 302, 303, 307, 308)
    ],
)

experiment(
    id="handler-set-cookie", rules=["S6", "S7"], pageAt="api",
    title="Set-Cookie on a scheme-handler response and on an HTTP response; which requests carry cookies",
    cookieURLs=["api/"],
    api={"GET /set": (200, [("Content-Type", "text/plain"), ("Set-Cookie", "fromhttp=1; Path=/")], "set")},
    handler={"GET /set": (200, [("Content-Type", "text/plain"), ("Set-Cookie", "fromhandler=1; Path=/"), ("Access-Control-Allow-Origin", "*")], "set")},
    script="""
  results.http = await fetchIt("GET", urls.api + "/set");
  results.handler = await fetchIt("GET", urls.app + "/set");
  results.cookie = document.cookie;
  results.again = await fetchIt("GET", urls.app + "/again");
""",
    checks=lambda r: [
        check("S6", "a Set-Cookie on the handler's response is stored in the web view's cookie store", "not stored",
              "stored" if any(c["name"] == "fromhandler" for jar in r["cookies"].values() for c in jar) or "fromhandler" in (r.get("saw") or {}).get("cookie", "") else "not stored"),
        check("N2", "a Set-Cookie on an HTTP response is stored and document.cookie sees it", "stored and visible",
              "stored and visible" if any(c["name"] == "fromhttp" for c in r["cookies"].get("api/", [])) and "fromhttp=1" in (r.get("saw") or {}).get("cookie", "") else "not"),
        check("S7", "WebKit attaches no Cookie header of its own store to a request for the handler", "no Cookie header",
              "no Cookie header" if arrivals(r, "handler", "/again") and "cookie" not in arrivals(r, "handler", "/again")[0]["headers"] else "Cookie header" if arrivals(r, "handler", "/again") else "no request"),
    ],
)

experiment(
    id="http-redirect-cookie", rules=["N2"], pageAt="api",
    title="a Set-Cookie on a 302 hop from the HTTP origin: stored, and sent on the next hop",
    cookieURLs=["api/"],
    api={"GET /login": (302, [("Location", "/home"), ("Set-Cookie", "session=s1; Path=/; HttpOnly")], ""),
         "GET /home": (200, [("Content-Type", "text/plain")], "home")},
    script="""
  results.login = await fetchIt("GET", urls.api + "/login");
""",
    checks=lambda r: [
        check("N2", "a cookie set on a redirect hop is stored and carried by the next hop", "carried",
              "carried" if arrivals(r, "api", "/home") and "session=s1" in arrivals(r, "api", "/home")[0]["headers"].get("cookie", "") else "not carried"),
    ],
)

experiment(
    id="script-cookies", rules=["C3", "C6"], pageAt="api", itp=True,
    title="document.cookie writes: HttpOnly, Secure on http, and a cookie for a year with ITP on",
    cookieURLs=["api/"],
    script="""
  document.cookie = "plain=1; path=/";
  document.cookie = "honly=1; path=/; HttpOnly";
  document.cookie = "sec=1; path=/; Secure";
  document.cookie = "year=1; path=/; max-age=31536000";
  results.cookie = document.cookie;
  results.now = Math.floor(Date.now() / 1000);
""",
    checks=lambda r: [
        check("C3", "document.cookie cannot write an HttpOnly cookie", "not stored",
              "stored" if any(c["name"] == "honly" for c in r["cookies"].get("api/", [])) else "not stored"),
        check("C6", "with ITP on, a script-written cookie lives at most 7 days", "capped at 7 days",
              cap(r)),
    ],
)


def cap(r):
    year = [c for c in r["cookies"].get("api/", []) if c["name"] == "year"]
    now = (r.get("saw") or {}).get("now")
    if not year or not year[0]["expires"] or not now:
        return "not stored"
    days = (year[0]["expires"] - now) / 86400
    return "capped at 7 days" if days <= 7.01 else f"kept for {round(days)} days"


CORS_API = {
    "GET /open": (200, [("Content-Type", "application/json"), ("Access-Control-Allow-Origin", "{app}")], '{"ok":1}'),
    "GET /closed": (200, [("Content-Type", "application/json")], '{"ok":1}'),
    "GET /wild": (200, [("Content-Type", "application/json"), ("Access-Control-Allow-Origin", "*")], '{"ok":1}'),
    "OPTIONS /custom": (204, [("Access-Control-Allow-Origin", "{app}"), ("Access-Control-Allow-Headers", "x-token")], ""),
    "GET /custom": (200, [("Content-Type", "application/json"), ("Access-Control-Allow-Origin", "{app}")], '{"ok":1}'),
    "GET /login": (200, [("Content-Type", "application/json"), ("Access-Control-Allow-Origin", "{app}"), ("Access-Control-Allow-Credentials", "true"),
                         ("Set-Cookie", "api_session=a1; Path=/")], '{"ok":1}'),
    "GET /me": (200, [("Content-Type", "application/json"), ("Access-Control-Allow-Origin", "{app}"), ("Access-Control-Allow-Credentials", "true")], '{"me":1}'),
}

experiment(
    id="cors-from-app-scheme", rules=["A1", "H4", "B9"], pageAt="app",
    title="fetch from a page on the custom scheme to an HTTP origin, with and without Access-Control-Allow-Origin, and with a custom header",
    api=CORS_API,
    script="""
  results.open = await fetchIt("GET", urls.api + "/open");
  results.closed = await fetchIt("GET", urls.api + "/closed");
  results.wildWithCredentials = await fetchIt("GET", urls.api + "/wild", undefined, {credentials: "include"});
  results.custom = await fetchIt("GET", urls.api + "/custom", undefined, {headers: {"X-Token": "t"}});
  results.origin = location.origin;
""",
    checks=lambda r: [
        check("A1", "a response allowing the app origin is readable", "readable", "readable" if (r.get("saw") or {}).get("open", {}).get("status") == 200 else "blocked"),
        check("A1", "a response without Access-Control-Allow-Origin is not", "blocked", "blocked" if "error" in (r.get("saw") or {}).get("closed", {}) else "readable"),
        check("A1", "* does not allow a credentialed request", "blocked", "blocked" if "error" in (r.get("saw") or {}).get("wildWithCredentials", {}) else "readable"),
        check("A1", "the request carries the app's origin", "h5r://app",
              (arrivals(r, "api", "/open") or [{"headers": {}}])[0]["headers"].get("origin", "none")),
        check("H4", "a custom request header makes a cross-origin request send a preflight first", "OPTIONS first",
              "OPTIONS first" if arrivals(r, "api", "/custom", "OPTIONS") else "no preflight"),
    ],
)

def app_cookie_experiment(itp):
    return experiment(
        id=f"app-scheme-third-party-cookies-itp-{'on' if itp else 'off'}", rules=["A2"], pageAt="app", itp=itp,
        title=f"an API on http answers a page on the custom scheme with a cookie (credentials: include); the next call, ITP {'on' if itp else 'off'}",
        cookieURLs=["api/"],
        api=CORS_API,
        script="""
  results.login = await fetchIt("GET", urls.api + "/login", undefined, {credentials: "include"});
  results.me = await fetchIt("GET", urls.api + "/me", undefined, {credentials: "include"});
""",
        checks=lambda r, itp=itp: [
            check("A2", f"ITP {'on' if itp else 'off'}: the API's cookie goes on the page's next request", "not sent" if itp else "sent",
                  "sent" if arrivals(r, "api", "/me") and "api_session" in arrivals(r, "api", "/me")[0]["headers"].get("cookie", "") else "not sent"),
        ],
    )


app_cookie_experiment(True)
app_cookie_experiment(False)

# A page's WebSocket to the API origin, and what the handshake brought there.
WEBSOCKET_SCRIPT = """
  results.socket = await new Promise(resolve => {
    try {
      const ws = new WebSocket(urls.api.replace("http:", "ws:") + "/socket");
      ws.onopen = () => { resolve("open"); ws.close(); };
      ws.onerror = () => resolve("error");
      setTimeout(() => resolve("timeout"), 3000);
    } catch (e) { resolve(String(e)); }
  });
"""


def socket_reached(r):
    return "server" if arrivals(r, "api", "/socket") else "not sent"


def socket_cookie(r):
    return "sent" if arrivals(r, "api", "/socket") and "api_session" in arrivals(r, "api", "/socket")[0]["headers"].get("cookie", "") else "not sent"


experiment(
    id="websocket-from-app-scheme", rules=["WS1"], pageAt="app", itp=False,
    title="a page on the custom scheme logs in on an HTTP origin (its cookie stored), then opens a WebSocket there that is answered without Access-Control-Allow-Origin",
    api=CORS_API,
    script="""
  results.login = await fetchIt("GET", urls.api + "/login", undefined, {credentials: "include"});""" + WEBSOCKET_SCRIPT,
    checks=lambda r: [
        check("WS1", "the handshake goes to the server, past the custom scheme's handler", "server", socket_reached(r)),
        check("WS1", "no CORS check: the socket opens though the answer carries no Access-Control-Allow-Origin", "open", (r.get("saw") or {}).get("socket", "no report")),
        check("WS1", "the handshake carries the web view's cookie for the origin", "sent", socket_cookie(r)),
    ],
)


def websocket_itp_experiment(itp):
    return experiment(
        id=f"websocket-from-app-scheme-itp-{'on' if itp else 'off'}", rules=["WS1", "A2"], pageAt="app", itp=itp,
        title=f"the API's cookie already in the store (an earlier visit), a page on the custom scheme opens a WebSocket to the API, ITP {'on' if itp else 'off'}",
        api=CORS_API,
        startingCookies=[("api", "api_session", "a1")],
        script=WEBSOCKET_SCRIPT,
        checks=lambda r, itp=itp: [
            check("WS1", "the handshake goes to the server, past the custom scheme's handler", "server", socket_reached(r)),
            check("A2", f"ITP {'on' if itp else 'off'}: the API's cookie, third-party to the page on the app's scheme, goes on the handshake",
                  "not sent" if itp else "sent", socket_cookie(r)),
        ],
    )


websocket_itp_experiment(True)
websocket_itp_experiment(False)

experiment(
    id="eventsource-from-app-scheme", rules=["ES1"], pageAt="app", itp=False,
    title="a page on the custom scheme logs in on an HTTP origin, wraps XMLHttpRequest and fetch as a JS bridge does, then opens an EventSource there with credentials",
    api=dict(CORS_API, **{
        "GET /events": (200, [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("Access-Control-Allow-Origin", "{app}"),
                              ("Access-Control-Allow-Credentials", "true")], "data: hi\n\n"),
    }),
    script="""
  results.login = await fetchIt("GET", urls.api + "/login", undefined, {credentials: "include"});
  // A bridge's patch: every XHR and fetch the page makes from now on is counted.
  let bridged = 0;
  const open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (...args) { bridged += 1; return open.apply(this, args); };
  const originalFetch = window.fetch;
  window.fetch = function (...args) { bridged += 1; return originalFetch.apply(this, args); };
  results.stream = await new Promise(resolve => {
    try {
      const source = new EventSource(urls.api + "/events", {withCredentials: true});
      source.onmessage = event => { resolve("message " + event.data); source.close(); };
      source.onerror = () => { resolve("error"); source.close(); };
      setTimeout(() => { resolve("timeout"); source.close(); }, 3000);
    } catch (e) { resolve(String(e)); }
  });
  results.bridged = String(bridged);
""",
    checks=lambda r: [
        check("ES1", "a bridge that wraps XMLHttpRequest and fetch sees no call for the EventSource", "0", (r.get("saw") or {}).get("bridged", "no report")),
        check("ES1", "WebKit asks for the event stream itself: Accept and Cache-Control", "text/event-stream; no-cache",
              "; ".join([arrivals(r, "api", "/events")[0]["headers"].get("accept", "none"), arrivals(r, "api", "/events")[0]["headers"].get("cache-control", "none")])
              if arrivals(r, "api", "/events") else "not sent"),
        check("ES1", "no preflight goes before it", "none", "none" if not arrivals(r, "api", "/events", "OPTIONS") else "OPTIONS"),
        check("ES1", "with withCredentials it carries the web view's cookie for the origin", "sent",
              "sent" if arrivals(r, "api", "/events") and "api_session" in arrivals(r, "api", "/events")[0]["headers"].get("cookie", "") else "not sent"),
        check("ES1", "the page reads the stream when the answer allows the app origin with credentials", "message hi", (r.get("saw") or {}).get("stream", "no report")),
    ],
)


def iframe_experiment(itp):
    return experiment(
        id=f"third-party-iframe-itp-{'on' if itp else 'off'}", rules=["N4"], pageAt="api", itp=itp,
        title=f"a third-party iframe sets a cookie on its own site and requests it again, ITP {'on' if itp else 'off'}",
        other={"GET /frame.html": (200, [("Content-Type", "text/html"), ("Set-Cookie", "widget=w1; Path=/; SameSite=None")],
                                   "<script>fetch('/vote', {credentials: 'include'}).then(() => parent.postMessage('voted', '*'))</script>")},
        html="<iframe id=f></iframe>",
        script="""
  const voted = new Promise(r => addEventListener("message", e => r(e.data)));
  document.getElementById("f").src = urls.other + "/frame.html";
  results.frame = await Promise.race([voted, sleep(4000).then(() => "timeout")]);
""",
        checks=lambda r, itp=itp: [
            check("N4", f"ITP {'on' if itp else 'off'}: the third-party iframe's own request carries its cookie",
                  "not carried" if itp else "carried",
                  "carried" if arrivals(r, "other", "/vote") and "widget=w1" in arrivals(r, "other", "/vote")[0]["headers"].get("cookie", "") else "not carried" if arrivals(r, "other", "/vote") else "no request"),
        ],
    )


iframe_experiment(True)
iframe_experiment(False)


def carried(r, path, cookie):
    hits = arrivals(r, "other", path)
    return ("carried" if cookie in hits[0]["headers"].get("cookie", "") else "not carried") if hits else "no request"


def subresource_experiment(itp):
    """N4 beyond iframes: the main frame's own script, image and fetch to another site."""
    return experiment(
        id=f"third-party-subresources-itp-{'on' if itp else 'off'}", rules=["N4"], pageAt="api", itp=itp,
        title=f"another site's cookie already in the store (a visit there), the page loads a script, an image and a credentialed fetch from that site, ITP {'on' if itp else 'off'}",
        startingCookies=[("other", "visitor", "v1")],
        cookieURLs=["other/"],
        other={"GET /widget.js": (200, [("Content-Type", "text/javascript"), ("Set-Cookie", "seen=s1; Path=/; SameSite=None")], "window.widgetLoaded = 1;"),
               "GET /pixel.gif": (200, [("Content-Type", "image/gif")], "GIF89a"),
               "GET /data": (200, [("Content-Type", "text/plain"), ("Access-Control-Allow-Origin", "{api}"), ("Access-Control-Allow-Credentials", "true")], "ok"),
               "GET /again": (200, [("Content-Type", "text/plain"), ("Access-Control-Allow-Origin", "{api}"), ("Access-Control-Allow-Credentials", "true")], "ok")},
        script="""
  await new Promise(r => { const s = document.createElement("script"); s.src = urls.other + "/widget.js"; s.onload = s.onerror = r; document.head.appendChild(s); });
  await new Promise(r => { const i = new Image(); i.onload = i.onerror = r; i.src = urls.other + "/pixel.gif"; });
  results.data = await fetchIt("GET", urls.other + "/data", undefined, {credentials: "include"});
  results.again = await fetchIt("GET", urls.other + "/again", undefined, {credentials: "include"});
""",
        checks=lambda r, itp=itp: [
            check("N4", f"ITP {'on' if itp else 'off'}: the script from the other site carries that site's cookie",
                  "not carried" if itp else "carried", carried(r, "/widget.js", "visitor=v1")),
            check("N4", f"ITP {'on' if itp else 'off'}: the image from the other site carries that site's cookie",
                  "not carried" if itp else "carried", carried(r, "/pixel.gif", "visitor=v1")),
            check("N4", f"ITP {'on' if itp else 'off'}: a credentialed fetch to the other site carries that site's cookie",
                  "not carried" if itp else "carried", carried(r, "/data", "visitor=v1")),
            check("N4", f"ITP {'on' if itp else 'off'}: the cookie the script's response set goes on the next request",
                  "not carried" if itp else "carried", carried(r, "/again", "seen=s1")),
            check("N4", f"ITP {'on' if itp else 'off'}: the engine's cookie store keeps the cookie the script's response set",
                  "not stored" if itp else "stored", "stored" if any(c["name"] == "seen" for c in r["cookies"].get("other/", [])) else "not stored"),
        ],
    )


subresource_experiment(True)
subresource_experiment(False)

experiment(
    id="samesite-cross-site-post", rules=["N6"], pageAt="other",
    title="a page on another site posts a form to the origin, which set a cookie without SameSite",
    api={"GET /set": (200, [("Content-Type", "text/plain"), ("Access-Control-Allow-Origin", "{other}"), ("Access-Control-Allow-Credentials", "true"),
                            ("Set-Cookie", "state=s1; Path=/")], "set"),
         "POST /callback": (200, [("Content-Type", "text/html")], "<script>1</script>")},
    html="<form id=f method=post><input name=code value=1></form><iframe name=sink></iframe>",
    script="""
  await fetchIt("GET", urls.api + "/set", undefined, {credentials: "include"});
  const f = document.getElementById("f");
  f.action = urls.api + "/callback"; f.target = "sink"; f.submit();
  await sleep(1500);
""",
    checks=lambda r: [
        check("N6", "a cookie without SameSite goes on a cross-site POST (iOS 18.0 treated it as Lax and kept it off)", "not carried",
              "carried" if arrivals(r, "api", "/callback") and "state=s1" in arrivals(r, "api", "/callback")[0]["headers"].get("cookie", "") else "not carried" if arrivals(r, "api", "/callback") else "no request"),
    ],
)

experiment(
    id="header-non-latin1", rules=["H3"], pageAt="api",
    title="an XHR setting a header whose value holds characters above U+00FF",
    script="""
  results.latin = await xhr("POST", urls.api + "/latin", "x", {headers: {"X-Body": "caf\\u00e9"}});
  results.chinese = await xhr("POST", urls.api + "/chinese", "x", {headers: {"X-Body": "\\u738b"}});
""",
    checks=lambda r: [
        check("H3", "setRequestHeader with a character above U+00FF fails and the request is not sent", "refused",
              "refused" if "error" in (r.get("saw") or {}).get("chinese", {}) and not arrivals(r, "api", "/chinese") else "sent"),
        check("H3", "Latin-1 characters are allowed", "sent", "sent" if arrivals(r, "api", "/latin") else "refused"),
    ],
)

experiment(
    id="custom-header-preflight", rules=["B9", "H4"], pageAt="api",
    title="a cross-origin XHR POST of text with a custom header the bridges add",
    other={"OPTIONS /api": (204, [("Access-Control-Allow-Origin", "{api}"), ("Access-Control-Allow-Headers", "x-wkwebview-request-type")], ""),
           "POST /api": (200, [("Access-Control-Allow-Origin", "{api}"), ("Content-Type", "text/plain")], "ok"),
           "POST /plain": (200, [("Access-Control-Allow-Origin", "{api}"), ("Content-Type", "text/plain")], "ok")},
    script="""
  results.plain = await xhr("POST", urls.other + "/plain", "a=1", {headers: {"Content-Type": "text/plain"}});
  results.marked = await xhr("POST", urls.other + "/api", "a=1", {headers: {"Content-Type": "text/plain", "x-wkwebview-request-type": "ajax"}});
""",
    checks=lambda r: [
        check("B9", "a simple cross-origin POST goes without a preflight", "no preflight", "preflight" if arrivals(r, "other", "/plain", "OPTIONS") else "no preflight"),
        check("B9", "the same request with the bridge's marker header sends a preflight first", "OPTIONS first",
              "OPTIONS first" if arrivals(r, "other", "/api", "OPTIONS") else "no preflight"),
    ],
)


# Plain HTTP side by side: the same bodies to an HTTP origin arrive whole, Blob included.
HTTP_BODY_SCRIPT = """
  results.string = await SEND("POST", urls.api + "/string", "hello world");
  results.params = await SEND("POST", urls.api + "/params", new URLSearchParams("a=1&b=two"));
  """ + FORM_FIELDS + """
  results.formdata = await SEND("POST", urls.api + "/formdata", fd);
  results.arraybuffer = await SEND("POST", urls.api + "/arraybuffer", new Uint8Array([1, 2, 3, 4]).buffer);
  results.typed = await SEND("POST", urls.api + "/typed", new Uint8Array([5, 6, 7, 8]));
  results.blob = await SEND("POST", urls.api + "/blob", new Blob([new Uint8Array([1, 2, 3, 4, 5])], {type: "application/octet-stream"}));
  """ + FORM_FILE + """
  results.formfile = await SEND("POST", urls.api + "/formfile", ff);
"""

for transport, send in (("XHR", "xhr"), ("fetch", "fetchIt")):
    experiment(
        id=f"http-bodies-{send.replace('It', '')}", rules=["S2"], pageAt="api",
        title=f"{transport} POST bodies by JavaScript type to the HTTP origin, beside the scheme handler's",
        script=HTTP_BODY_SCRIPT.replace("SEND", send),
        checks=lambda r, transport=transport: [
            check("S2", f"over plain HTTP a {transport}'s Blob body arrives (the loss is the handler's)", "arrives",
                  "arrives" if body_at(r, "api", "/blob") == "5 bytes" else body_at(r, "api", "/blob")),
            check("S2", f"over plain HTTP a {transport}'s FormData with a File arrives", "arrives",
                  "arrives" if arrivals(r, "api", "/formfile") and "a.jpg" in arrivals(r, "api", "/formfile")[0]["body"] else body_at(r, "api", "/formfile")),
        ],
    )


OTHER_SENDERS = """
  results.sync = await xhr("POST", BASE + "/sync", "sync body", {sync: true});
  try { results.beacon = navigator.sendBeacon(BASE + "/beacon", "beacon body"); } catch (e) { results.beacon = String(e); }
  results.keepalive = await fetchIt("POST", BASE + "/keepalive", "keepalive body", {keepalive: true});
  try { const form = document.getElementById("f"); form.action = BASE + "/form"; form.submit(); } catch (e) { results.form = String(e); }
  await sleep(1500);
"""
FORM_HTML = "<form id=f method=post target=sink><input name=field value=form-body></form><iframe name=sink></iframe>"

for at, base in (("handler", "urls.app"), ("api", "urls.api")):
    experiment(
        id=f"{'handler' if at == 'handler' else 'http'}-other-senders", rules=["S3"], pageAt="app" if at == "handler" else "api",
        title=f"a synchronous XHR, sendBeacon, fetch with keepalive and a form submit, each POSTing text to the {'scheme handler' if at == 'handler' else 'HTTP origin'}",
        html=FORM_HTML, settle=1.0,
        script=OTHER_SENDERS.replace("BASE", base),
        checks=lambda r, at=at: [
            check("S3", f"{what} reaches the {'handler' if at == 'handler' else 'HTTP origin'} with its body", "arrives",
                  "arrives" if arrivals(r, at, path) and arrivals(r, at, path)[0]["bodyLength"] == length else body_at(r, at, path))
            for what, path, length in (("a synchronous XHR", "/sync", 9), ("fetch with keepalive", "/keepalive", 14), ("a form submit", "/form", 15))
            + ((("sendBeacon", "/beacon", 11),) if at == "api" else ())
        ] + ([
            # An observation no rule states yet: WebKit refuses a beacon to a custom scheme.
            check(None, "sendBeacon to the custom scheme", "not sent",
                  "not sent" if not arrivals(r, "handler", "/beacon") else "sent")
        ] if at == "handler" else []),
    )


def landing(prefix):
    return (200, [("Content-Type", "text/html")],
            "<!doctype html><script>window.webkit.messageHandlers.lab.postMessage(JSON.stringify({href: location.href}))</script>")


NAV_ROUTES = {
    "POST /nav302": (302, [("Location", "/landed302.html")], ""),
    "POST /nav307": (307, [("Location", "/landed307.html")], ""),
    "* /landed302.html": landing(""),
    "* /landed307.html": landing(""),
}

for code in (302, 307):
    for at in ("api", "handler"):
        experiment(
            id=f"{'http' if at == 'api' else 'handler'}-navigation-{code}", rules=["N1" if at == "api" else "S5"], pageAt="app" if at == "handler" else at,
            title=f"a form POST navigation answered by {code} from the {'HTTP origin' if at == 'api' else 'scheme handler'}",
            html="<form id=f method=post><input name=field value=nav></form>", timeout=6, silenceIsObservation=True,
            **{"handler" if at == "handler" else "api": dict(NAV_ROUTES)},
            script=f"""
  const form = document.getElementById("f");
  form.action = {"urls.app" if at == "handler" else "urls.api"} + "/nav{code}"; form.submit();
  await sleep(100000);
""",
            checks=lambda r, at=at, code=code: [
                check("N1", f"a {code} to a form POST navigation is followed, as {'POST with the body' if code == 307 else 'GET'}, and location.href is the target",
                      f"followed, location.href {'/landed%d.html' % code}",
                      (f"followed, location.href {'/landed%d.html' % code}" if (r.get("saw") or {}).get("href", "").endswith(f"/landed{code}.html")
                       and arrivals(r, "api", f"/landed{code}.html", "POST" if code == 307 else "GET") else "not followed"))
            ] if at == "api" else [
                check("S5", f"a {code} answered by the scheme handler to a form POST navigation is followed", "not followed",
                      "followed" if arrivals(r, "handler", f"/landed{code}.html") else "not followed")
            ],
        )

# The frameworks' own interception code, per release (Tools/lab/frameworks.py); they skip
# with a note when the shared frameworks folder is absent.
import frameworks  # noqa: E402

frameworks.add(experiment, check)

BY_ID = {e["id"]: e for e in EXPERIMENTS}
