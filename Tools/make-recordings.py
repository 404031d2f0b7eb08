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


def entry(t_ms, method, url, req_headers, status, resp_headers, resp_text="", post=None, resource_type=None, duration=40, resp_mime="text/html", ua=UA):
    e = {
        "startedDateTime": (BASE + timedelta(milliseconds=t_ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "time": duration,
        "request": {
            "method": method, "url": url, "httpVersion": "HTTP/1.1",
            # Every engine's network stack adds Accept-Encoding; an entry without it (and
            # without Host or Cookie) is a browser's provisional headers (E7).
            "headers": hdrs([("User-Agent", ua)] + req_headers + [("Accept-Encoding", "gzip, deflate, br")]),
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

# 4b. A news page whose analytics script counts the visit in a cookie (visit=1 -> 2) and
#     adds a session cookie; the hero image was queued before the script ran (the
#     browser's per-host connections were busy) and leaves 0.6 s later with the Cookie
#     header built when it was queued: the old visit and no session_hit. Nothing deleted
#     or put back the cookies (E8); the API calls after the write carry both.
NW = "https://news.example.org"
FLOWS["queued-image-old-cookie"] = har([
    entry(0, "GET", NW + "/", doc_headers([("Cookie", "visit=1")]), 200, [("Content-Type", "text/html; charset=utf-8")],
          "<img src=/img/hero.jpg><script src=/js/analytics.js></script>"),
    entry(120, "GET", NW + "/js/analytics.js", [("Accept", "*/*"), ("Sec-Fetch-Dest", "script"), ("Sec-Fetch-Mode", "no-cors"), ("Referer", NW + "/"), ("Cookie", "visit=1")], 200,
          [("Content-Type", "application/javascript")], "document.cookie = 'visit=2; path=/; max-age=31536000'; document.cookie = 'session_hit=1; path=/'; loadFeed();",
          resp_mime="application/javascript"),
    entry(300, "GET", NW + "/api/feed", xhr_headers([("Referer", NW + "/"), ("Cookie", "visit=2; session_hit=1")]), 200, [("Content-Type", "application/json")], '{"items":[]}', resp_mime="application/json"),
    entry(900, "GET", NW + "/img/hero.jpg", [("Accept", "image/webp,image/avif,image/*,*/*;q=0.8"), ("Sec-Fetch-Dest", "image"), ("Sec-Fetch-Mode", "no-cors"), ("Referer", NW + "/"), ("Cookie", "visit=1")], 200,
          [("Content-Type", "image/jpeg")], "", resp_mime="image/jpeg"),
    entry(2600, "GET", NW + "/api/more", xhr_headers([("Referer", NW + "/"), ("Cookie", "visit=2; session_hit=1")]), 200, [("Content-Type", "application/json")], '{"items":[]}', resp_mime="application/json"),
], "An image queued before the analytics script's cookie write leaves after it with the old Cookie header.")

# 5. The first-request cookie: the app logged in natively, so NativeJar holds the token and
#    the web view's store is empty (the scenario sidecar says so).
H = "https://h5.example.com"
FLOWS["native-login-first-request"] = har([
    entry(0, "GET", H + "/wallet", doc_headers([("Cookie", "token=4b1d2c")]), 200, [("Content-Type", "text/html; charset=utf-8")], "<div id=balance></div>"),
    entry(2500, "GET", H + "/api/balance", xhr_headers([("Cookie", "token=4b1d2c")]), 200, [("Content-Type", "application/json")], '{"balance":12.5}', resp_mime="application/json"),
], "A page opened after a native login: the first document request needs NativeJar's token.")
# 5b. The app's native code logs in (NSURLSession: its User-Agent names CFNetwork) and
#     the session cookie lands in NativeJar; the web view opens the account page 0.4 s
#     later. A capture holds both kinds of traffic: the native calls are replayed outside
#     the web view (NC1), and the page waits for J1 to bring the cookie over.
NATIVE_UA = "BankApp/5.2 CFNetwork/1568.100.1 Darwin/24.0.0"
BK = "https://m.bank.example"
BKAPI = "https://api.bank.example"
FLOWS["native-api-login"] = har([
    entry(0, "POST", BKAPI + "/v1/login", [("Accept", "*/*"), ("Content-Type", "application/json"), ("Accept-Language", "en-GB,en;q=0.9")], 200,
          [("Content-Type", "application/json"), ("Set-Cookie", "sid=c41f09; Domain=bank.example; Path=/; Secure; HttpOnly")], '{"ok":true}',
          post=("application/json", '{"user":"alice","otp":"482913"}'), resp_mime="application/json", ua=NATIVE_UA),
    entry(400, "GET", BK + "/account", doc_headers([("Cookie", "sid=c41f09")]), 200, [("Content-Type", "text/html; charset=utf-8")], "<div id=account></div>"),
    entry(1800, "GET", BK + "/api/balance", xhr_headers([("Cookie", "sid=c41f09")]), 200, [("Content-Type", "application/json")], '{"balance":310.2}', resp_mime="application/json"),
    entry(2500, "GET", BKAPI + "/v1/messages?unread=1", [("Accept", "*/*"), ("Cookie", "sid=c41f09")], 200, [("Content-Type", "application/json")], '{"unread":0}',
          resp_mime="application/json", ua=NATIVE_UA),
], "The app logs in natively (CFNetwork), then the web view opens the account page that needs the session cookie.")

# 5c. A chat page: a login XHR sets the session cookie, then the page opens a WebSocket
#     that needs it. WebKit opens WebSockets itself (WS1): where the login's Set-Cookie went
#     to NativeJar (an interceptor), the handshake a moment later reads WebJar without it.
CH = "https://chat.example.com"
FLOWS["websocket-after-login"] = har([
    entry(0, "GET", CH + "/room/7", doc_headers(), 200, [("Content-Type", "text/html; charset=utf-8")], "<div id=messages></div>"),
    entry(800, "POST", CH + "/api/login", xhr_headers([("Content-Type", "application/json"), ("Origin", CH)]), 200,
          [("Content-Type", "application/json"), ("Set-Cookie", "chat_sid=5e11a0; Path=/; Secure; HttpOnly")], '{"ok":true}',
          post=("application/json", '{"user":"alice"}'), resp_mime="application/json"),
    entry(1100, "GET", "wss://chat.example.com/ws/room/7", [("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Origin", CH), ("Sec-WebSocket-Version", "13"),
          ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-Fetch-Dest", "websocket"), ("Sec-Fetch-Mode", "websocket"), ("Cookie", "chat_sid=5e11a0")], 101,
          [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")], resp_mime="", resource_type="websocket"),
], "A chat page logs in by XHR, then opens a WebSocket that needs the session cookie.")

# 5d. A live-scores page: a login XHR sets the session cookie, then the page opens an
#     EventSource that needs it. An EventSource is no XHR or fetch (ES1): a bridge that
#     patches those carries the login through native code, its Set-Cookie into NativeJar,
#     while WebKit itself opens the event stream a moment later with WebJar's cookies.
LS = "https://live.example.com"
FLOWS["eventsource-after-login"] = har([
    entry(0, "GET", LS + "/match/381", doc_headers(), 200, [("Content-Type", "text/html; charset=utf-8")], "<div id=score></div>"),
    entry(700, "POST", LS + "/api/login", xhr_headers([("Content-Type", "application/json"), ("Origin", LS)]), 200,
          [("Content-Type", "application/json"), ("Set-Cookie", "live_sid=7a20c3; Path=/; Secure; HttpOnly")], '{"ok":true}',
          post=("application/json", '{"user":"alice"}'), resp_mime="application/json"),
    entry(1000, "GET", LS + "/api/events?match=381", [("Accept", "text/event-stream"), ("Cache-Control", "no-cache"), ("Sec-Fetch-Dest", "empty"),
          ("Sec-Fetch-Mode", "cors"), ("Sec-Fetch-Site", "same-origin"), ("Cookie", "live_sid=7a20c3")], 200,
          [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")], "event: score\ndata: {\"home\":1,\"away\":0}\n\n",
          resp_mime="text/event-stream", resource_type="eventsource"),
], "A live-scores page logs in by XHR, then opens an EventSource that needs the session cookie.")

# 6. A 307 POST redirect on a document, after a first load that itself redirects with
#    Set-Cookie on the 302 hop.
P = "https://pay.example.com"
FLOWS["post-307-document"] = har([
    entry(0, "GET", P + "/", doc_headers(), 302, [("Location", "/checkout"), ("Set-Cookie", "cart=9; Path=/")]),
    entry(60, "GET", P + "/checkout", doc_headers([("Cookie", "cart=9")]), 200, [("Content-Type", "text/html")], "<form method=post action=/pay>"),
    entry(4000, "POST", P + "/pay", doc_headers([("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", "cart=9"), ("Origin", P)]), 307,
          [("Location", "/pay/confirm")], post=("application/x-www-form-urlencoded", "amount=42.00&currency=CNY")),
    entry(4050, "POST", P + "/pay/confirm", doc_headers([("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", "cart=9"), ("Origin", P)]), 200,
          [("Content-Type", "text/html")], "<p>paid</p>", post=("application/x-www-form-urlencoded", "amount=42.00&currency=CNY")),
], "A first load redirected with Set-Cookie on the 302 hop, then a form POST answered by 307.")

# 7. A multipart upload with a file, and a captcha image fetched by XHR.
F = "https://forum.example.com"
jpeg = bytes([0xFF, 0xD8, 0xFF, 0xE0]) + bytes((i * 91 + 7) % 256 for i in range(1500))
boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
multipart = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nMy trip\r\n"
             f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n").encode() + jpeg + f"\r\n--{boundary}--\r\n".encode()
png = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + bytes((i * 13) % 256 for i in range(300))
captcha = entry(500, "GET", F + "/api/captcha", xhr_headers(), 200, [("Content-Type", "image/png")], "", resp_mime="image/png")
captcha["response"]["content"] = {"size": len(png), "mimeType": "image/png", "text": base64.b64encode(png).decode(), "encoding": "base64"}
FLOWS["multipart-file-upload"] = har([
    entry(0, "GET", F + "/post/new", doc_headers(), 200, [("Content-Type", "text/html")], "<form enctype=multipart/form-data>"),
    captcha,
    entry(3000, "POST", F + "/api/attachments", xhr_headers([("Content-Type", f"multipart/form-data; boundary={boundary}"), ("Origin", F)]), 200,
          [("Content-Type", "application/json")], '{"id":77}', post=(f"multipart/form-data; boundary={boundary}", multipart), resp_mime="application/json"),
], "An XHR posting FormData with a title and a photo file; a captcha image fetched by XHR.")

# 8. A URLSearchParams body whose values hold &, =, + and non-ASCII.
FLOWS["urlsearchparams-body"] = har([
    entry(0, "GET", M + "/search", doc_headers(), 200, [("Content-Type", "text/html")], "<input name=q>"),
    entry(1200, "POST", M + "/api/search", xhr_headers([("Content-Type", "application/x-www-form-urlencoded;charset=UTF-8"), ("Origin", M)]), 200,
          [("Content-Type", "application/json")], '{"hits":3}',
          post=("application/x-www-form-urlencoded;charset=UTF-8", "q=tea+%26+cake&filter=price%3D10&tag=c%2B%2B&city=%E6%9D%AD%E5%B7%9E"), resp_mime="application/json"),
], "new URLSearchParams({q: 'tea & cake', filter: 'price=10', tag: 'c++', city: '杭州'}) posted by XHR.")

# 9. A third-party iframe with its own API calls and cookies; the main page talks to a
#    partner API with a cookie its script set.
S2 = "https://shop.example.com"
W = "https://widget.reviews.net"
PP = "https://api.partner-pay.com"
FLOWS["third-party-iframe"] = har([
    entry(0, "GET", S2 + "/product/1", doc_headers(), 200, [("Content-Type", "text/html")], "<iframe src=https://widget.reviews.net/embed?p=1>"),
    entry(300, "GET", W + "/embed?p=1", [("Accept", "text/html"), ("Sec-Fetch-Dest", "iframe"), ("Sec-Fetch-Mode", "navigate"), ("Referer", S2 + "/product/1")], 200,
          [("Content-Type", "text/html"), ("Set-Cookie", "rv_session=abc; Path=/; Secure; SameSite=None")], "<button>helpful</button>"),
    entry(2000, "POST", W + "/api/vote", xhr_headers([("Content-Type", "application/json"), ("Referer", W + "/embed?p=1"), ("Origin", W), ("Cookie", "rv_session=abc")]), 200,
          [("Content-Type", "application/json")], '{"ok":true}', post=("application/json", '{"review":5,"vote":1}'), resp_mime="application/json"),
    # The shop's XHRs to the partner go with credentials (withCredentials): the partner's own
    # cookie shows the first went without pp_hint, so the shop's script wrote it in between.
    entry(2500, "GET", PP + "/v1/config", xhr_headers([("Origin", S2), ("Cookie", "pp_device=d1")]), 200, [("Content-Type", "application/json")], '{"v":1}', resp_mime="application/json"),
    entry(3000, "POST", PP + "/v1/token", xhr_headers([("Content-Type", "application/json"), ("Origin", S2), ("Cookie", "pp_device=d1; pp_hint=1")]), 200,
          [("Content-Type", "application/json")], '{"token":"t"}', post=("application/json", '{"amount":42}'), resp_mime="application/json"),
], "A review widget in a third-party iframe votes with its own cookie; the shop's script sets a cookie for a partner API.")

# 10. A 3 MiB text body, and a JSON body holding non-Latin-1 text.
C = "https://cms.example.com"
draft = "".join(f"Paragraph {i}: the quick brown fox jumps over the lazy dog. " for i in range(3 * 1024 * 1024 // 60 + 1))[: 3 * 1024 * 1024]
FLOWS["large-text-body"] = har([
    entry(0, "GET", C + "/editor", doc_headers(), 200, [("Content-Type", "text/html")], "<textarea></textarea>"),
    entry(5000, "POST", C + "/api/drafts", xhr_headers([("Content-Type", "text/plain;charset=UTF-8"), ("Origin", C)]), 201,
          [("Content-Type", "application/json")], '{"saved":true}', post=("text/plain;charset=UTF-8", draft), resp_mime="application/json", duration=900),
    entry(7000, "POST", C + "/api/comments", xhr_headers([("Content-Type", "application/json"), ("Origin", C)]), 201,
          [("Content-Type", "application/json")], '{"ok":true}', post=("application/json", '{"comment":"好评！"}'), resp_mime="application/json"),
], "An editor saving a 3 MiB draft, then a comment in Chinese.")

# 11. A sendBeacon, and a video the page later stops.
N = "https://news.example.com"
video = entry(800, "GET", N + "/media/clip.mp4", [("Accept", "*/*"), ("Sec-Fetch-Dest", "video"), ("Sec-Fetch-Mode", "no-cors"), ("Range", "bytes=0-")], 206,
              [("Content-Type", "video/mp4")], "", resp_mime="video/mp4")
beacon = entry(9000, "POST", N + "/analytics/collect", [("Accept", "*/*"), ("Content-Type", "text/plain;charset=UTF-8"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "no-cors")], 204,
               [], "", post=("text/plain;charset=UTF-8", '{"event":"read","article":1,"seconds":42}'), resource_type="ping")
FLOWS["send-beacon"] = har([
    entry(0, "GET", N + "/a/1", doc_headers(), 200, [("Content-Type", "text/html")], "<video src=/media/clip.mp4>"),
    video, beacon,
], "navigator.sendBeacon reporting reading time as the page unloads; a video the reader stopped.")

# 12. An XHR whose upload listener is set (its body arrives only as a stream), and a
#     fetch with a ReadableStream body.
D = "https://drive.example.com"
FLOWS["xhr-upload-listener"] = har([
    entry(0, "GET", D + "/upload", doc_headers(), 200, [("Content-Type", "text/html")], "<progress></progress>"),
    entry(2000, "POST", D + "/api/upload", xhr_headers([("Content-Type", "text/csv"), ("Origin", D)]), 200, [("Content-Type", "application/json")], '{"rows":3}',
          post=("text/csv", "name,amount\nalice,3\nbob,4\n"), resp_mime="application/json"),
    entry(4000, "POST", D + "/api/stream", [("Accept", "*/*"), ("Content-Type", "application/octet-stream"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("Origin", D)], 200,
          [("Content-Type", "application/json")], '{"ok":true}', post=("application/octet-stream", "chunk-1 chunk-2 chunk-3"), resource_type="fetch", resp_mime="application/json"),
], "xhr.upload.onprogress set before send(); a fetch uploading a ReadableStream.")

# 13. A login by XHR, then page loads that need its cookies (one HttpOnly, one holding a
#     quote, one long-lived).
B = "https://bank.example.com"
cookies = "auth=s3cr3t; pref=it's; theme=dark"
FLOWS["xhr-login-then-page"] = har([
    entry(0, "GET", B + "/login", doc_headers(), 200, [("Content-Type", "text/html")], "<form id=login>"),
    entry(3000, "POST", B + "/api/login", xhr_headers([("Content-Type", "application/json"), ("Origin", B)]), 200,
          [("Content-Type", "application/json"), ("Set-Cookie", "auth=s3cr3t; Path=/; HttpOnly; Secure"), ("Set-Cookie", "pref=it's; Path=/; Secure"),
           ("Set-Cookie", "theme=dark; Path=/; Max-Age=31536000; Secure")], '{"ok":true}', post=("application/json", '{"user":"alice","password":"correct-horse"}'), resp_mime="application/json"),
    entry(3300, "GET", B + "/account", doc_headers([("Cookie", cookies)]), 200, [("Content-Type", "text/html")], "<h1>Account</h1>"),
    entry(3600, "GET", B + "/account/orders", doc_headers([("Cookie", cookies)]), 200, [("Content-Type", "text/html")], "<h1>Orders</h1>"),
], "A login XHR sets three cookies; the next two documents need them.")

# 14. A logout by XHR that deletes the session cookie; the next page must not send it.
L = "https://mail.example.com"
FLOWS["logout-xhr"] = har([
    entry(0, "GET", L + "/inbox", doc_headers([("Cookie", "sid=77")]), 200, [("Content-Type", "text/html")], "<ul></ul>"),
    entry(5000, "POST", L + "/api/logout", xhr_headers([("Content-Type", "application/json"), ("Origin", L), ("Cookie", "sid=77")]), 200,
          [("Content-Type", "application/json"), ("Set-Cookie", "sid=; Path=/; Max-Age=0")], '{"ok":true}', post=("application/json", "{}"), resp_mime="application/json"),
    entry(5400, "GET", L + "/login", doc_headers(), 200, [("Content-Type", "text/html")], "<form>"),
], "A logout XHR deletes the session cookie; the login page that follows must not carry it.")

# 15. A session cookie from a login page, then a wallet opened in a new web view with its
#     own process pool.
V = "https://wallet.example.com"
FLOWS["new-webview-session"] = har([
    entry(0, "GET", V + "/login", doc_headers(), 200, [("Content-Type", "text/html"), ("Set-Cookie", "wsid=42; Path=/; Secure; HttpOnly")], "<form>"),
    entry(1500, "GET", V + "/home", doc_headers([("Cookie", "wsid=42")]), 200, [("Content-Type", "text/html")], "<a target=_blank href=/wallet>"),
    entry(4000, "GET", V + "/wallet", doc_headers([("Cookie", "wsid=42")]), 200, [("Content-Type", "text/html")], "<h1>Wallet</h1>"),
], "A login sets a session cookie; the wallet then opens in a new web view with its own WKProcessPool.")

# 16. Entries that are no evidence of the page's cookies (E1-E4), as real exporters write
#     them: a document load aborted before its response (Chrome keeps provisional headers,
#     without Cookie), a script served from memory cache, an XHR whose headers the exporter
#     did not record, and a captured POST cut short by a gap carrying only one cookie.
#     None of them says a cookie was absent: the cookies the next requests carry were there
#     from the start, and nothing was deleted.
U = "https://news.example.com"
_unfinished = [
    entry(0, "GET", U + "/", doc_headers(), 0, [], resource_type="document", duration=0),
    entry(2000, "GET", U + "/", doc_headers([("Cookie", "sid=abc; pref=dark")]), 200, [("Content-Type", "text/html")], "<h1>News</h1>", resource_type="document"),
    entry(2200, "GET", U + "/static/app.js", [("Accept", "*/*"), ("Sec-Fetch-Dest", "script")], 200, [("Content-Type", "text/javascript")], "init()", resource_type="script", resp_mime="text/javascript"),
    entry(2600, "GET", U + "/api/feed", [], 200, [("Content-Type", "application/json")], '{"items":[]}', resource_type="xhr", resp_mime="application/json"),
    entry(3000, "POST", U + "/api/read", xhr_headers([("Content-Type", "application/json"), ("Origin", U), ("Cookie", "sid=abc")]), 200,
          [("Content-Type", "application/json")], '{"ok":true}', post=("application/json", '{"id":7}'), resp_mime="application/json"),
    entry(3400, "GET", U + "/api/profile", xhr_headers([("Cookie", "sid=abc; pref=dark")]), 200, [("Content-Type", "application/json")], '{"name":"alice"}', resp_mime="application/json"),
    entry(3800, "GET", U + "/api/notifications", [], 200, [("Content-Type", "application/json")], '{"unread":0}', resource_type="xhr", resp_mime="application/json"),
]
_unfinished[0]["response"]["statusText"] = ""
_unfinished[0]["response"]["_error"] = "net::ERR_ABORTED"
_unfinished[2]["_fromCache"] = "memory"
_unfinished[3]["request"]["headers"] = []
_unfinished[4]["_evidenceGap"] = "request-cut"
# Only the provisional headers, as Chrome's DevTools reports them before the network stack
# adds Accept-Encoding and Cookie (an export without the extra-info events).
_unfinished[6]["request"]["headers"] = hdrs([("Referer", U + "/"), ("User-Agent", UA), ("sec-ch-ua", '"Chromium";v="120"')])
FLOWS["unfinished-requests"] = har(_unfinished, "An aborted load, a cached script, an XHR without recorded headers, a POST cut short and an XHR with only its provisional headers: none is evidence that a cookie was absent (E1-E4, E7).")

# 17. A login through an API on another origin, as the web build recorded it (the page on
#     m.shop, the API on api.shop, CORS allowing the web origin): shipped in Capacitor, the
#     page is at capacitor://localhost, so the API must allow that origin, and its session
#     cookie becomes third-party (A1, A2); CapacitorHttp carries it natively instead. The
#     script the page then loads from its own origin ships in the app's bundle (A4). The
#     API is configured for the web origin alone (no Vary: Origin); its feature-flag
#     service echoes whatever origin asks (Vary: Origin), so whether it would allow the
#     app's origin is not in the recording: a thing to check, not an error.
W, API = "https://m.shop.example.com", "https://api.shop.example.com"
cors = [("Access-Control-Allow-Origin", W), ("Access-Control-Allow-Credentials", "true")]
FLOWS["capacitor-api-login"] = har([
    entry(0, "GET", W + "/", doc_headers(), 200, [("Content-Type", "text/html; charset=utf-8")], "<div id=app></div>"),
    entry(2000, "OPTIONS", API + "/v1/login", [("Accept", "*/*"), ("Access-Control-Request-Method", "POST"), ("Access-Control-Request-Headers", "content-type"), ("Origin", W), ("Sec-Fetch-Mode", "cors")], 204,
          cors + [("Access-Control-Allow-Methods", "GET, POST"), ("Access-Control-Allow-Headers", "content-type"), ("Access-Control-Max-Age", "600")], resource_type="preflight"),
    entry(2050, "POST", API + "/v1/login", [("Accept", "application/json"), ("Content-Type", "application/json"), ("Origin", W), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")], 200,
          cors + [("Content-Type", "application/json"), ("Set-Cookie", "session=c41f0a; Path=/; Secure; HttpOnly; SameSite=None")], '{"ok":true}',
          post=("application/json", '{"user":"alice","password":"correct-horse"}'), resource_type="fetch", resp_mime="application/json"),
    entry(2600, "GET", API + "/v1/orders", [("Accept", "application/json"), ("Origin", W), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("Cookie", "session=c41f0a")], 200,
          cors + [("Content-Type", "application/json")], '{"orders":[]}', resource_type="fetch", resp_mime="application/json"),
    entry(2700, "GET", W + "/assets/orders.js", [("Accept", "*/*"), ("Sec-Fetch-Dest", "script"), ("Sec-Fetch-Mode", "no-cors")], 200,
          [("Content-Type", "text/javascript")], "export const orders = () => [];", resource_type="script", resp_mime="text/javascript"),
    entry(2800, "GET", "https://flags.shop.example.com/v1/flags", [("Accept", "application/json"), ("Origin", W), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")], 200,
          [("Access-Control-Allow-Origin", W), ("Vary", "Origin"), ("Content-Type", "application/json")], '{"newCheckout":true}', resource_type="fetch", resp_mime="application/json"),
], "A login through an API on another origin with CORS for the web origin, then an API call that needs the session cookie and the page's script for it, loaded from the page's own origin; a feature-flag service that allows whichever origin asks.")

# 18. Uploads the way web code writes them, each a different body type for CapacitorHttp:
#     a Blob sent as octet-stream by fetch, a JSON Blob PUT by fetch (the scenario pins it
#     as a Blob: the wire shows JSON text), axios posting FormData through XHR, and fetch
#     posting FormData with a file.
G = "https://photos.example.com"
blob = bytes((i * 53 + 5) % 256 for i in range(1200))
fb = "----WebKitFormBoundaryQ2b7xLr5Cc9nTz1K"
fetch_form = (f"--{fb}\r\nContent-Disposition: form-data; name=\"album\"\r\n\r\nSummer\r\n"
              f"--{fb}\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"beach.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n").encode() + jpeg + f"\r\n--{fb}--\r\n".encode()
xb = "----WebKitFormBoundaryd8Hq3MkP0vXe6Ws4"
xhr_form = (f"--{xb}\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nSunset\r\n"
            f"--{xb}\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"sunset.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n").encode() + jpeg + f"\r\n--{xb}--\r\n".encode()
fetch = lambda extra=(): [("Accept", "*/*"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("Origin", G)] + list(extra)
FLOWS["capacitor-uploads"] = har([
    entry(0, "GET", G + "/upload", doc_headers(), 200, [("Content-Type", "text/html; charset=utf-8")], "<input type=file multiple>"),
    entry(1500, "POST", G + "/api/raw", fetch([("Content-Type", "application/octet-stream")]), 200, [("Content-Type", "application/json")], '{"stored":1200}',
          post=("application/octet-stream", blob), resource_type="fetch", resp_mime="application/json"),
    entry(2500, "PUT", G + "/api/albums/7/meta", fetch([("Content-Type", "application/json")]), 200, [("Content-Type", "application/json")], '{"ok":true}',
          post=("application/json", '{"title":"Summer","private":true}'), resource_type="fetch", resp_mime="application/json"),
    entry(3500, "POST", G + "/api/photos", xhr_headers([("Content-Type", f"multipart/form-data; boundary={xb}"), ("Origin", G)]), 200,
          [("Content-Type", "application/json")], '{"id":31}', post=(f"multipart/form-data; boundary={xb}", xhr_form), resp_mime="application/json"),
    entry(4500, "POST", G + "/api/albums/7/photos", fetch([("Content-Type", f"multipart/form-data; boundary={fb}")]), 200,
          [("Content-Type", "application/json")], '{"id":32}', post=(f"multipart/form-data; boundary={fb}", fetch_form), resource_type="fetch", resp_mime="application/json"),
    entry(5500, "POST", G + "/api/albums/7/tags", fetch([("Content-Type", "application/x-www-form-urlencoded;charset=UTF-8")]), 200,
          [("Content-Type", "application/json")], '{"tags":2}', post=("application/x-www-form-urlencoded;charset=UTF-8", "tag=beach&tag=sunset"), resource_type="fetch", resp_mime="application/json"),
], "A Blob, a JSON Blob, an XHR FormData (axios), a fetch FormData and a fetch URLSearchParams, each uploaded to the page's own server.")

# 19. Recorded inside a Cordova app (Safari Web Inspector): the page at app://localhost, a
#     multipart upload the app's scheme handler forwards, then an API call whose CORS
#     allows the app origin.
C = "app://localhost"
cb = "----WebKitFormBoundaryWm3Yc8Qe1Ls5Pt0R"
cform = (f"--{cb}\r\nContent-Disposition: form-data; name=\"report\"; filename=\"scan.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n").encode() + jpeg + f"\r\n--{cb}--\r\n".encode()
FLOWS["cordova-multipart-upload"] = har([
    entry(0, "GET", C + "/index.html", doc_headers(), 200, [("Content-Type", "text/html")], "<script src=js/app.js></script>"),
    entry(80, "GET", C + "/js/app.js", [("Accept", "*/*"), ("Sec-Fetch-Dest", "script")], 200, [("Content-Type", "text/javascript")],
          "upload()", resource_type="script", resp_mime="text/javascript"),
    entry(3000, "POST", C + "/api/reports", xhr_headers([("Content-Type", f"multipart/form-data; boundary={cb}")]), 200,
          [("Content-Type", "application/json")], '{"report":5}', post=(f"multipart/form-data; boundary={cb}", cform), resp_mime="application/json"),
    entry(3800, "GET", "https://api.clinic.example.org/v2/reports/5", [("Accept", "application/json"), ("Origin", C), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")], 200,
          [("Content-Type", "application/json"), ("Access-Control-Allow-Origin", C), ("Access-Control-Allow-Credentials", "true")], '{"status":"queued"}', resource_type="xhr", resp_mime="application/json"),
], "Inside a Cordova app: a multipart upload with a file to the app's scheme handler, then an API call whose CORS allows app://localhost.")

# 20. Recorded inside a Tauri app (Safari Web Inspector): the page at tauri://localhost, a
#     POST to the app's own handler, a login answered with a cookie, then a fetch that needs it.
T, TAPI = "tauri://localhost", "https://api.notes.example.net"
tcors = [("Access-Control-Allow-Origin", T), ("Access-Control-Allow-Credentials", "true")]
FLOWS["tauri-post"] = har([
    entry(0, "GET", T + "/", doc_headers(), 200, [("Content-Type", "text/html")], "<div id=notes></div>"),
    entry(1200, "POST", T + "/api/drafts", [("Accept", "*/*"), ("Content-Type", "application/json"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")], 200,
          [("Content-Type", "application/json")], '{"saved":true}', post=("application/json", '{"title":"Groceries","body":"tea, rice"}'), resource_type="fetch", resp_mime="application/json"),
    entry(2000, "POST", TAPI + "/login", [("Accept", "application/json"), ("Content-Type", "application/x-www-form-urlencoded"), ("Origin", T), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")], 200,
          tcors + [("Content-Type", "application/json"), ("Set-Cookie", "nsid=9e2b; Path=/; Secure; HttpOnly; SameSite=None")], '{"ok":true}',
          post=("application/x-www-form-urlencoded", "user=alice&password=correct-horse"), resource_type="xhr", resp_mime="application/json"),
    entry(2600, "GET", TAPI + "/notes", [("Accept", "application/json"), ("Origin", T), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("Cookie", "nsid=9e2b")], 200,
          tcors + [("Content-Type", "application/json")], '{"notes":[]}', resource_type="fetch", resp_mime="application/json"),
], "Inside a Tauri app: a POST to tauri://localhost, an XHR login that sets a cookie, then a fetch that needs it.")

# 21. A sign-in whose identity provider posts the answer back (response_mode=form_post): the
#     shop set its state cookie without SameSite and a session hint with SameSite=Lax, and
#     the recording client (one that does not enforce SameSite) sent both on the cross-site
#     POST; WebKit keeps the Lax one off (N5), and on iOS 18.0 the other too (N6).
IDP = "https://id.example.net"
FLOWS["sso-form-post"] = har([
    entry(0, "GET", S + "/account", doc_headers(), 302, [("Location", IDP + "/authorize?client_id=shop&response_mode=form_post"), ("Set-Cookie", "auth_state=5d1e; Path=/; Secure; HttpOnly"),
          ("Set-Cookie", "login_hint=lx; Path=/; Secure; SameSite=Lax")]),
    entry(60, "GET", IDP + "/authorize?client_id=shop&response_mode=form_post", doc_headers(), 200, [("Content-Type", "text/html")], "<form method=post action=https://shop.example.com/auth/callback>"),
    entry(4000, "POST", S + "/auth/callback", doc_headers([("Content-Type", "application/x-www-form-urlencoded"), ("Origin", IDP), ("Cookie", "auth_state=5d1e; login_hint=lx")]), 200,
          [("Content-Type", "text/html")], "<h1>Signed in</h1>", post=("application/x-www-form-urlencoded", "code=Qx81&state=5d1e")),
], "A sign-in whose identity provider posts the code back to the shop, which needs its state cookie.")

# 22. An Ionic app's first launch after install: its page signs in on the portal with a
#     form POST answered by a 302 and the session cookie; the scenario says it is the
#     first launch, on which WebKit ignores Set-Cookie (ION3).
O = "https://portal.example.com"
FLOWS["ionic-first-launch-login"] = har([
    entry(0, "GET", O + "/", doc_headers(), 200, [("Content-Type", "text/html; charset=utf-8")], "<form method=post action=https://portal.example.com/login>"),
    entry(4000, "POST", O + "/login", doc_headers([("Content-Type", "application/x-www-form-urlencoded"), ("Origin", "ionic://localhost")]), 302,
          [("Location", "/home"), ("Set-Cookie", "psid=e81c; Path=/; Secure; HttpOnly; SameSite=None")], post=("application/x-www-form-urlencoded", "user=alice&password=correct-horse")),
    entry(4080, "GET", O + "/home", doc_headers([("Cookie", "psid=e81c")]), 200, [("Content-Type", "text/html")], "<h1>Portal</h1>"),
    entry(5000, "GET", O + "/api/me", xhr_headers([("Cookie", "psid=e81c")]), 200, [("Content-Type", "application/json")], '{"user":"alice"}', resp_mime="application/json"),
], "An app's first launch: a form login answered by a 302 with the session cookie, then the portal's page and its API.")

# 23. An activity page an offline package and a prefetch config cover (the article iOS秒开H5实战总结 (2021-05-07)): the page
#     and its script are in the package (the script's md5 is the server's: a hit), the
#     stylesheet's is older (stale), the banner image redirects to a CDN; the page's
#     document sets a cookie for /topic; native code would prefetch three API calls the page
#     makes (one exactly, one the page sends with that cookie, one with another body) and a
#     fourth it never makes.
ACT = "https://act.example.com"
page_url = ACT + "/topic/v1/pub/danV9fm7.html?id=163&itemId=126"
act_js, act_css = "renderTopic({id: 163});", "body { color: #333 }"
FLOWS["offline-package-page"] = har([
    entry(0, "GET", page_url, doc_headers(), 200, [("Content-Type", "text/html; charset=utf-8"), ("Set-Cookie", "visit=v1; Path=/topic")], "<script src=/ares/topic.js></script>"),
    entry(90, "GET", ACT + "/ares/topic.js", [("Accept", "*/*"), ("Sec-Fetch-Dest", "script"), ("Sec-Fetch-Mode", "no-cors")], 200,
          [("Content-Type", "application/javascript")], act_js, resp_mime="application/javascript"),
    entry(95, "GET", ACT + "/ares/topic.css", [("Accept", "text/css"), ("Sec-Fetch-Dest", "style"), ("Sec-Fetch-Mode", "no-cors")], 200,
          [("Content-Type", "text/css")], act_css, resp_mime="text/css"),
    entry(100, "GET", ACT + "/ares/banner.png", [("Accept", "image/*"), ("Sec-Fetch-Dest", "image"), ("Sec-Fetch-Mode", "no-cors")], 302,
          [("Location", "https://cdn.example.com/banner-v2.png")]),
    entry(140, "GET", "https://cdn.example.com/banner-v2.png", [("Accept", "image/*"), ("Sec-Fetch-Dest", "image"), ("Sec-Fetch-Mode", "no-cors")], 200,
          [("Content-Type", "image/png")], "PNG", resp_mime="image/png"),
    entry(1800, "GET", ACT + "/act/napi/distribution/info?id=163&itemId=126", xhr_headers(), 200,
          [("Content-Type", "application/json")], '{"stock":12}', resp_mime="application/json"),
    entry(1900, "GET", ACT + "/topic/v1/user.json?id=163&itemId=126", xhr_headers([("Cookie", "visit=v1")]), 200,
          [("Content-Type", "application/json")], '{"visits":3}', resp_mime="application/json"),
    entry(2100, "POST", ACT + "/topic/v1/ding/sinkList.json?id=163&itemId=126", xhr_headers([("Content-Type", "application/json"), ("Origin", ACT), ("Cookie", "visit=v1")]), 200,
          [("Content-Type", "application/json")], '{"list":[]}', post=("application/json", '{"visitRecord":{"page":1}}'), resp_mime="application/json"),
], "An activity page with its script, stylesheet and banner, then the two API calls a prefetch config names.")

# 24. An app that resolves its hosts by HTTPDNS (the article iOS秒开H5实战总结 (2021-05-07) section 4): a login answered by a
#     302 with the session cookie, the page, an API call that needs the cookie, and two
#     images from hosts that share one IP (the sidecar says how the app sends them).
HD = "https://shop.example.com"
FLOWS["httpdns-ip-direct"] = har([
    entry(0, "GET", HD + "/signin", doc_headers(), 200, [("Content-Type", "text/html")], "<form method=post>"),
    entry(3000, "POST", HD + "/signin", doc_headers([("Content-Type", "application/x-www-form-urlencoded"), ("Origin", HD)]), 302,
          [("Location", "https://www.example.com/home"), ("Set-Cookie", "ssid=7a2e; Domain=example.com; Path=/; Secure; HttpOnly")], post=("application/x-www-form-urlencoded", "user=alice&password=correct-horse")),
    entry(3050, "GET", "https://www.example.com/home", doc_headers([("Cookie", "ssid=7a2e")]), 200, [("Content-Type", "text/html")], "<h1>Home</h1>"),
    entry(3400, "GET", HD + "/api/cart", xhr_headers([("Cookie", "ssid=7a2e")]), 200, [("Content-Type", "application/json")], '{"items":2}', resp_mime="application/json"),
    entry(3500, "GET", "https://img1.example.com/a.png", [("Accept", "image/*"), ("Sec-Fetch-Dest", "image")], 200, [("Content-Type", "image/png")], "PNG", resp_mime="image/png"),
    entry(3520, "GET", "https://img2.example.com/b.png", [("Accept", "image/*"), ("Sec-Fetch-Dest", "image")], 200, [("Content-Type", "image/png")], "PNG", resp_mime="image/png"),
], "A login redirected with the session cookie, the page, an API call that needs it, two images from hosts on one IP.")
FLOWS["httpdns-no-host-check"] = har([
    entry(0, "GET", HD + "/", doc_headers(), 200, [("Content-Type", "text/html")], "<h1>Shop</h1>"),
    entry(800, "GET", HD + "/api/banner", xhr_headers(), 200, [("Content-Type", "application/json")], '{"banner":1}', resp_mime="application/json"),
], "A page and its API, sent by HTTPDNS without the certificate checked against the name (the sidecar says so).")

# 28. A sign-in and a sign-out, both page loads that WebKit makes, with the page's API
#     calls after each (the web build, on its own origin). Shipped in Capacitor with
#     CapacitorHttp, the API calls read NativeJar: the bridge's cookie observer copies the
#     session cookie there at once (CAP3), but never the sign-out's deletion, so the last
#     call still sends it (COOKIE_EXTRA); with CapacitorCookies neither copy deletes (CAPC3).
SO = "https://club.example.com"
FLOWS["capacitor-sso-logout"] = har([
    entry(0, "GET", SO + "/", doc_headers(), 200, [("Content-Type", "text/html")], "<a href=/sso/callback>Sign in</a>"),
    entry(1500, "GET", SO + "/sso/callback?code=4f1", doc_headers([("Referer", SO + "/")]), 200,
          [("Content-Type", "text/html"), ("Set-Cookie", "club_sid=9d2c; Path=/; Secure; HttpOnly")], "<h1>Welcome</h1>"),
    entry(1800, "GET", SO + "/api/me", xhr_headers([("Referer", SO + "/sso/callback?code=4f1"), ("Cookie", "club_sid=9d2c")]), 200,
          [("Content-Type", "application/json")], '{"name":"alice"}', resp_mime="application/json"),
    entry(5000, "GET", SO + "/logout", doc_headers([("Referer", SO + "/sso/callback?code=4f1"), ("Cookie", "club_sid=9d2c")]), 200,
          [("Content-Type", "text/html"), ("Set-Cookie", "club_sid=; Path=/; Max-Age=0; Secure; HttpOnly")], "<h1>Signed out</h1>"),
    entry(5300, "GET", SO + "/api/me", xhr_headers([("Referer", SO + "/logout")]), 401,
          [("Content-Type", "application/json")], '{"error":"signed out"}', resp_mime="application/json"),
], "A sign-in page load that sets the session cookie and an API call that needs it, then a sign-out page load that expires it and an API call without it.")

SCENARIOS = {
    "new-webview-session": {"comment": "The wallet opens in a new WKWebView created with its own WKProcessPool (J4).", "newProcessPool": [{"url": "*/wallet"}]},
    "native-login-first-request": {"comment": "Native login: the token is in NativeJar, the web view's store starts empty.", "preexistingCookies": "native"},
    "third-party-iframe": {"comment": "The review widget's page runs in a plain web view the app's scheme handler does not serve (S8).", "thirdPartyWebView": "plain"},
    "capacitor-uploads": {"comment": "The wire cannot show it: the PUT's JSON was a Blob (new Blob([json], {type: 'application/json'})).",
                          "exchanges": [{"method": "PUT", "url": "*/api/albums/7/meta", "bodyKind": "binary"}]},
    "httpdns-ip-direct": {"comment": "HTTPDNS resolves the shop and the two image hosts; the image hosts share one IP and the app sets no SNI (D1-D3, D5).",
                          "httpdns": {"hosts": {"shop.example.com": "203.0.113.7", "img1.example.com": "203.0.113.9", "img2.example.com": "203.0.113.9"}, "sni": False}},
    "httpdns-no-host-check": {"comment": "HTTPDNS without the certificate checked against the name (D4).",
                              "httpdns": {"hosts": {"shop.example.com": "203.0.113.7"}, "certificateHostCheck": False}},
    "xhr-login-then-page": {"comment": "The orders page opens in a pooled web view created at the session's start (W1).", "reusedWebView": [{"url": "*/account/orders"}]},
    "ionic-first-launch-login": {"comment": "The app's first launch after install (ION3).", "firstLaunch": True},
    "tauri-post": {"comment": "Recorded while the app ran under `tauri ios dev`, which proxies tauri://localhost to the dev server (TAU2).", "devServer": True},
    "xhr-upload-listener": {"comment": "The wire cannot show these: the XHR has an upload listener, the fetch body is a ReadableStream.",
                            "exchanges": [{"method": "POST", "url": "*/api/upload", "uploadListener": True},
                                          {"method": "POST", "url": "*/api/stream", "bodyKind": "stream"}]},
}

import hashlib


def md5(text):
    return hashlib.md5(text.encode()).hexdigest()


# Offline packages and prefetch configs (the article iOS秒开H5实战总结 (2021-05-07)), in the config API's envelope.
RESOURCE_MAPS = {
    "offline-package-page": {"code": 200, "data": {"version": "553", "update": True, "resourcemap": {
        page_url.split("?")[0] + "?id=163&itemId=126#top": {"version": "3", "md5": md5("<script src=/ares/topic.js></script>"), "download": "https://cdn.example.com/xcache/3/page.html", "ctype": "text/html"},
        ACT + "/ares/topic.js": {"version": "3", "md5": md5(act_js), "download": "https://cdn.example.com/xcache/3/topic.js", "ctype": "application/javascript;charset=UTF-8"},
        ACT + "/ares/topic.css": {"version": "2", "md5": md5("body { color: #000 }"), "download": "https://cdn.example.com/xcache/2/topic.css", "ctype": "text/css"},
        ACT + "/ares/banner.png": {"version": "1", "md5": md5("PNG-old"), "download": "https://cdn.example.com/xcache/1/banner.png", "ctype": "image/png"},
    }}},
    "xhr-json-post": {"resourcemap": {
        M + "/static/cart.js": {"version": "1", "md5": md5("fetchCart()"), "download": "https://cdn.example.com/xcache/1/cart.js", "ctype": "application/javascript"},
        M + "/cart": {"version": "1", "md5": md5("<div id=cart></div>"), "download": "https://cdn.example.com/xcache/1/cart.html", "ctype": "text/html"},
    }},
}
PREFETCH_CONFIGS = {
    "offline-package-page": {"code": 200, "data": {"name": "prefetchConfig", "version": "4", "config": [{
        "url": ACT + "/topic/v1/pub/danV9fm7.html",
        "interfaces": [
            {"api": ACT + "/act/napi/distribution/info", "method": "GET", "urlParam": True},
            {"api": ACT + "/topic/v1/user.json", "method": "GET", "urlParam": True},
            {"api": ACT + "/topic/v1/ding/sinkList.json", "method": "POST", "urlParam": True, "bodyParam": True, "body": {"visitRecord": {}}},
            {"api": ACT + "/act/napi/coupon", "method": "GET", "urlParam": True},
        ]}]}},
    "xhr-json-post": {"config": [{
        "url": M + "/cart",
        "interfaces": [{"api": M + "/api/order", "method": "POST", "body": {"sku": "tea-250g", "quantity": 1}}]}]},
}

if __name__ == "__main__":
    os.makedirs("Recordings", exist_ok=True)
    for name, doc in FLOWS.items():
        with open(f"Recordings/{name}.har", "w") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(f"Recordings/{name}.har: {len(doc['log']['entries'])} entries")
    for kind, docs in (("resourcemap", RESOURCE_MAPS), ("prefetch", PREFETCH_CONFIGS)):
        for name, doc in docs.items():
            with open(f"Recordings/{name}.{kind}.json", "w") as f:
                json.dump(doc, f, indent=2)
                f.write("\n")
            print(f"Recordings/{name}.{kind}.json")
    for name, scenario in SCENARIOS.items():
        with open(f"Recordings/{name}.scenario.json", "w") as f:
            json.dump(scenario, f, indent=2)
            f.write("\n")
        print(f"Recordings/{name}.scenario.json")
