#!/usr/bin/env python3
"""Writes the hand-made HAR flows in Recordings/ (run from the project root).

Each flow is what a browser engine really sends for one H5 problem the seeds describe;
Recordings/README.md explains each. The files are generated so a reviewer can read the
intent here and the flows stay consistent (timestamps, cookies, redirect chains).
"""
import base64
import json
import os
from datetime import datetime, timedelta, timezone

BASE = datetime(2026, 11, 1, 10, 0, 0, tzinfo=timezone.utc)
UA = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"


def hdrs(pairs):
    return [{"name": n, "value": v} for n, v in pairs]


def entry(t_ms, method, url, req_headers, status, resp_headers, resp_text="", post=None, resource_type=None, duration=40, resp_mime="text/html"):
    e = {
        "startedDateTime": (BASE + timedelta(milliseconds=t_ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "time": duration,
        "request": {
            "method": method, "url": url, "httpVersion": "HTTP/1.1",
            "headers": hdrs([("User-Agent", UA)] + req_headers),
            "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0,
        },
        "response": {
            "status": status, "statusText": {200: "OK", 302: "Found", 307: "Temporary Redirect"}.get(status, ""),
            "httpVersion": "HTTP/1.1", "headers": hdrs(resp_headers), "cookies": [],
            "content": {"size": len(resp_text.encode()), "mimeType": resp_mime, "text": resp_text},
            "redirectURL": next((v for n, v in resp_headers if n.lower() == "location"), ""),
            "headersSize": -1, "bodySize": len(resp_text.encode()),
        },
        "cache": {}, "timings": {"send": 0, "wait": duration, "receive": 0},
    }
    if post is not None:
        mime, body = post
        if isinstance(body, bytes):
            e["request"]["postData"] = {"mimeType": mime, "text": base64.b64encode(body).decode(), "_encoding": "base64"}
            e["request"]["bodySize"] = len(body)
        else:
            e["request"]["postData"] = {"mimeType": mime, "text": body}
            e["request"]["bodySize"] = len(body.encode())
    if resource_type:
        e["_resourceType"] = resource_type
    return e


def doc_headers(extra=()):
    return [("Accept", "text/html,application/xhtml+xml"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")] + list(extra)


def xhr_headers(extra=()):
    return [("Accept", "application/json"), ("X-Requested-With", "XMLHttpRequest"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")] + list(extra)


def har(entries, comment):
    return {"log": {"version": "1.2", "creator": {"name": "h5replay Tools/make-recordings.py", "version": "1", "comment": comment}, "pages": [], "entries": entries}}


FLOWS = {}

# 1. A login form POST answered by a 302 with Set-Cookie, then the document GET.
S = "https://shop.example.com"
FLOWS["login-redirect"] = har([
    entry(0, "GET", S + "/login", doc_headers(), 200, [("Content-Type", "text/html; charset=utf-8")], "<form method=post action=/login>...</form>"),
    entry(5000, "POST", S + "/login", doc_headers([("Content-Type", "application/x-www-form-urlencoded"), ("Origin", S)]), 302,
          [("Location", "/home"), ("Set-Cookie", "session=7f3a9c2e1b; Path=/; Secure; HttpOnly"), ("Content-Length", "0")],
          post=("application/x-www-form-urlencoded", "user=alice&password=correct-horse")),
    entry(5060, "GET", S + "/home", doc_headers([("Cookie", "session=7f3a9c2e1b")]), 200, [("Content-Type", "text/html; charset=utf-8")], "<h1>Welcome back</h1>"),
    entry(6500, "GET", S + "/api/profile", xhr_headers([("Cookie", "session=7f3a9c2e1b")]), 200, [("Content-Type", "application/json")], '{"name":"alice"}', resp_mime="application/json"),
], "Login form POST, 302 with Set-Cookie on the hop, then the document and an XHR that need the session.")

# 2. An XHR JSON POST.
M = "https://m.example.com"
FLOWS["xhr-json-post"] = har([
    entry(0, "GET", M + "/cart", doc_headers(), 200, [("Content-Type", "text/html; charset=utf-8")], "<div id=cart></div>"),
    entry(120, "GET", M + "/static/cart.js", [("Accept", "*/*"), ("Sec-Fetch-Dest", "script"), ("Sec-Fetch-Mode", "no-cors")], 200, [("Content-Type", "application/javascript")], "fetchCart()", resp_mime="application/javascript"),
    entry(900, "POST", M + "/api/order", xhr_headers([("Content-Type", "application/json;charset=UTF-8"), ("Origin", M)]), 200,
          [("Content-Type", "application/json")], '{"order":"A-1001","status":"created"}',
          post=("application/json;charset=UTF-8", '{"sku":"tea-250g","quantity":2,"coupon":"WELCOME10"}'), resp_mime="application/json"),
], "An XHR posting JSON to an API.")

# 3. A fetch upload of a binary Blob.
E = "https://editor.example.com"
png = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + bytes((i * 37 + 11) % 256 for i in range(2040))
FLOWS["fetch-blob-upload"] = har([
    entry(0, "GET", E + "/avatar", doc_headers(), 200, [("Content-Type", "text/html; charset=utf-8")], "<input type=file>"),
    entry(2400, "POST", E + "/api/avatar", [("Accept", "*/*"), ("Content-Type", "image/png"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("Origin", E)], 200,
          [("Content-Type", "application/json")], '{"stored":true}', post=("image/png", png), resource_type="fetch", resp_mime="application/json"),
], "fetch() uploading a PNG Blob picked from a file input.")

# 4. A page whose script sets a cookie and then calls an API.
A = "https://app.example.com"
FLOWS["script-cookie-api"] = har([
    entry(0, "GET", A + "/index.html", doc_headers(), 200, [("Content-Type", "text/html; charset=utf-8"), ("Set-Cookie", "uid=42; Path=/; Max-Age=86400")], "<script src=/js/main.js></script>"),
    entry(100, "GET", A + "/js/main.js", [("Accept", "*/*"), ("Sec-Fetch-Dest", "script"), ("Sec-Fetch-Mode", "no-cors"), ("Cookie", "uid=42")], 200, [("Content-Type", "application/javascript")],
          "document.cookie = 'ab_bucket=B; path=/'; fetchFeed();", resp_mime="application/javascript"),
    entry(400, "GET", A + "/api/feed?page=1", xhr_headers([("Cookie", "uid=42; ab_bucket=B")]), 200, [("Content-Type", "application/json")], '{"items":[]}', resp_mime="application/json"),
], "Script writes document.cookie, then calls an API at once; the API needs the cookie.")

# 5. The first-request cookie: the app logged in natively, so NativeJar holds the token and
#    the web view's store is empty (the scenario sidecar says so).
H = "https://h5.example.com"
FLOWS["native-login-first-request"] = har([
    entry(0, "GET", H + "/wallet", doc_headers([("Cookie", "token=4b1d2c")]), 200, [("Content-Type", "text/html; charset=utf-8")], "<div id=balance></div>"),
    entry(2500, "GET", H + "/api/balance", xhr_headers([("Cookie", "token=4b1d2c")]), 200, [("Content-Type", "application/json")], '{"balance":12.5}', resp_mime="application/json"),
], "A page opened after a native login: the first document request needs NativeJar's token.")
SCENARIOS = {
    "native-login-first-request": {"comment": "Native login: the token is in NativeJar, the web view's store starts empty.", "preexistingCookies": "native"},
}

if __name__ == "__main__":
    os.makedirs("Recordings", exist_ok=True)
    for name, doc in FLOWS.items():
        with open(f"Recordings/{name}.har", "w") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(f"Recordings/{name}.har: {len(doc['log']['entries'])} entries")
    for name, scenario in SCENARIOS.items():
        with open(f"Recordings/{name}.scenario.json", "w") as f:
            json.dump(scenario, f, indent=2)
            f.write("\n")
        print(f"Recordings/{name}.scenario.json")
