#!/usr/bin/env python3
"""Writes a corpus of hostile inputs for `h5replay import` (docs/design.md, "Reliability and security").

  make-hostile-corpus.py OUT_DIR
  make-hostile-corpus.py --large FILE MB     a large valid capture (many connections), for
                                             the crash-safety test

Each input must either import (exit 0, with diagnostics) or be refused (exit 2, with a
message naming the file), never crash and never leave a partial recording:

- captures truncated at every record boundary, and inside records;
- captures with corrupted bytes at several rates (`editcap -E` when installed, else the
  same corruption done here: each byte of each packet changed with that probability);
- HTTP framing attacks carried in captures: Content-Length with Transfer-Encoding,
  duplicate and conflicting Content-Length, bad chunk sizes, obs-fold, NUL bytes,
  a 1 MB header line, a header flood, a response without a request, pipelining past a
  `Connection: close`;
- gzip, deflate and brotli bombs;
- HAR with wrong types, huge strings, deep nesting, truncated JSON, and non-HAR JSON;
- recordings compressed whole (gzip, zlib as mitmproxy's .zhar): cut short at several
  points, corrupted, padded, or holding no recording.
"""
import gzip
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import zlib


def pcap(packets, linktype=1):
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype)
    t = 1_700_000_000.0
    for p in packets:
        t += 0.001
        out += struct.pack("<IIII", int(t), int((t % 1) * 1e6), len(p), len(p)) + p
    return out


def tcp_packet(src, dst, sport, dport, seq, flags, payload=b""):
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, 0, 0x50, flags, 65535, 0, 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, bytes(src), bytes(dst)) + tcp
    return b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip


def connection(request, response, port=50000, mss=1400):
    """A whole TCP connection carrying one client byte stream and one server byte stream."""
    c, s = [10, 0, 0, 1], [10, 0, 0, 2]
    packets = [tcp_packet(c, s, port, 80, 999, 0x02), tcp_packet(s, c, 80, port, 4999, 0x12)]
    seq = 1000
    for i in range(0, len(request), mss):
        packets.append(tcp_packet(c, s, port, 80, seq, 0x18, request[i:i + mss]))
        seq += len(request[i:i + mss])
    sseq = 5000
    for i in range(0, len(response), mss):
        packets.append(tcp_packet(s, c, 80, port, sseq, 0x18, response[i:i + mss]))
        sseq += len(response[i:i + mss])
    packets.append(tcp_packet(c, s, port, 80, seq, 0x11))
    packets.append(tcp_packet(s, c, 80, port, sseq, 0x11))
    return packets


def http_response(body, headers=b"", status=b"200 OK"):
    return b"HTTP/1.1 " + status + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n" + headers + b"\r\n" + body


GET = b"GET /app/index.html HTTP/1.1\r\nHost: h5.example.com\r\nCookie: sid=s3cr3t\r\n\r\n"


def baseline():
    """A small realistic capture: three connections, keep-alive, gzip, chunked, a POST."""
    page = b"<html>" + b"<p>h5 page</p>" * 200 + b"</html>"
    packets = []
    packets += connection(GET + b"GET /app.js HTTP/1.1\r\nHost: h5.example.com\r\n\r\n",
                          http_response(gzip.compress(page, mtime=0), b"Content-Encoding: gzip\r\nSet-Cookie: seen=1; Path=/\r\n")
                          + b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", port=50001)
    body = json.dumps({"order": 42, "items": list(range(100))}).encode()
    packets += connection(b"POST /api/order HTTP/1.1\r\nHost: h5.example.com\r\nContent-Type: application/json\r\nContent-Length: "
                          + str(len(body)).encode() + b"\r\n\r\n" + body, http_response(b'{"ok":true}'), port=50002)
    packets += connection(b"GET /login HTTP/1.1\r\nHost: h5.example.com\r\n\r\n",
                          b"HTTP/1.1 302 Found\r\nLocation: /home\r\nContent-Length: 0\r\n\r\n", port=50003)
    return packets


def framing_attacks():
    big = b"X-Big: " + b"a" * (1 << 20) + b"\r\n"
    flood = b"".join(b"X-H%d: v\r\n" % i for i in range(5000))
    ok = http_response(b"ok")
    cases = {
        "cl-and-te": (b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n", ok + ok),
        "te-and-cl": (b"POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 100\r\n\r\n0\r\n\r\n", ok),
        "duplicate-cl-same": (b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", ok),
        "duplicate-cl-conflict": (b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 30\r\n\r\nabc", ok),
        "cl-negative": (b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\nabc", ok),
        "cl-overflow": (b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\nabc", ok),
        "cl-huge": (b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 9000000000000000000\r\n\r\nabc", ok),
        "chunk-size-bad": (GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"),
        "chunk-size-huge": (GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\nhello\r\n"),
        "chunk-size-negative": (GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n"),
        "chunk-no-crlf": (GET, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX5\r\nworld\r\n0\r\n\r\n"),
        "obs-fold": (b"GET / HTTP/1.1\r\nHost: a\r\nX-Folded: one\r\n two\r\n\tthree\r\n\r\n", ok),
        "obs-fold-first": (b"GET / HTTP/1.1\r\n Host: a\r\n\r\n", ok),
        "nul-in-header": (b"GET / HTTP/1.1\r\nHost: a\x00b\r\n\r\n", ok),
        "nul-in-target": (b"GET /a\x00b HTTP/1.1\r\nHost: a\r\n\r\n", ok),
        "nul-everywhere": (b"\x00" * 5000, b"\x00" * 5000),
        "header-line-1mb": (b"GET / HTTP/1.1\r\nHost: a\r\n" + big + b"\r\n", ok),
        "response-header-1mb": (GET, b"HTTP/1.1 200 OK\r\n" + big + b"Content-Length: 0\r\n\r\n"),
        "header-flood": (b"GET / HTTP/1.1\r\nHost: a\r\n" + flood + b"\r\n", ok),
        "bare-lf": (b"GET / HTTP/1.1\nHost: a\n\n", b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok"),
        "bare-cr": (b"GET / HTTP/1.1\rHost: a\r\r", ok),
        "response-without-request": (b"", ok + ok),
        "after-close": (b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /more HTTP/1.1\r\nHost: a\r\n\r\n", ok),
        "no-version": (b"GET /\r\n\r\n", b"<html>0.9</html>"),
        "version-99": (b"GET / HTTP/9.9\r\nHost: a\r\n\r\n", b"HTTP/9.9 200 OK\r\nContent-Length: 0\r\n\r\n"),
        "status-bad": (GET, b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n"),
        "status-1xx-flood": (GET, b"HTTP/1.1 100 Continue\r\n\r\n" * 2000 + ok),
        "connect-tunnel": (b"CONNECT h5.example.com:443 HTTP/1.1\r\nHost: h5.example.com:443\r\n\r\n\x16\x03\x01\x00\x05hello", b"HTTP/1.1 200 Connection established\r\n\r\n\x16\x03\x03\x00\x02hi"),
        "upgrade-websocket": (b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x05hello", b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x02hi"),
        "content-encoding-unknown": (GET, http_response(b"abc", b"Content-Encoding: compress\r\n")),
        "content-encoding-corrupt": (GET, http_response(b"\x1f\x8b\x08\x00garbage", b"Content-Encoding: gzip\r\n")),
        "content-encoding-truncated": (GET, http_response(gzip.compress(b"x" * 10000)[:-30], b"Content-Encoding: gzip\r\n")),
        "content-encoding-stacked": (GET, http_response(gzip.compress(gzip.compress(b"x" * 1000)), b"Content-Encoding: gzip, gzip, gzip, br, deflate\r\n")),
    }
    return cases


def bombs():
    zeros = b"\x00" * (200 << 20)
    gz = gzip.compress(zeros, 9, mtime=0)
    df = zlib.compress(zeros, 9)
    # 1,000,000 bytes of "x" in 13 bytes of brotli.
    br = bytes([0x5B, 0x3F, 0x42, 0x0F, 0x40, 0x02, 0x2F, 0x1E, 0x0B, 0x24, 0x3F, 0xE7, 0x01])
    nested = gzip.compress(gz, 9, mtime=0)
    return {
        "bomb-gzip-200mb": http_response(gz, b"Content-Encoding: gzip\r\n"),
        "bomb-deflate-200mb": http_response(df, b"Content-Encoding: deflate\r\n"),
        "bomb-br-ratio": http_response(br, b"Content-Encoding: br\r\n"),
        "bomb-gzip-nested": http_response(nested, b"Content-Encoding: gzip, gzip\r\n"),
        "bomb-chunked-gzip": b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"".join(b"%x\r\n" % len(gz[i:i + 60000]) + gz[i:i + 60000] + b"\r\n" for i in range(0, len(gz), 60000)) + b"0\r\n\r\n",
    }


def corrupt(data, rate, rng):
    """What `editcap -E RATE` does: each packet byte changed with probability RATE."""
    out = bytearray(data[:24])
    off = 24
    while off + 16 <= len(data):
        header = data[off:off + 16]
        incl = struct.unpack("<I", header[8:12])[0]
        packet = bytearray(data[off + 16:off + 16 + incl])
        for i in range(len(packet)):
            if rng.random() < rate:
                packet[i] = rng.randrange(256)
        out += header + packet
        off += 16 + incl
    return bytes(out)


def hars():
    good = {"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": [{
        "startedDateTime": "2024-01-01T00:00:00Z", "time": 1,
        "request": {"method": "GET", "url": "https://h5.example.com/", "httpVersion": "HTTP/1.1", "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [], "cookies": [], "content": {"size": 2, "mimeType": "text/plain", "text": "ok"}, "redirectURL": "", "headersSize": -1, "bodySize": 2},
        "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}]}}

    def variant(path, value):
        h = json.loads(json.dumps(good))
        node = h
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return json.dumps(h).encode()

    entry = ["log", "entries", 0]
    out = {
        "wrong-type-entries.har": variant(["log", "entries"], "not a list"),
        "wrong-type-log.har": variant(["log"], 42),
        "wrong-type-status.har": variant(entry + ["response", "status"], "two hundred"),
        "wrong-type-headers.har": variant(entry + ["request", "headers"], {"a": 1}),
        "wrong-type-header-value.har": variant(entry + ["request", "headers"], [{"name": "a", "value": 12}]),
        "wrong-type-url.har": variant(entry + ["request", "url"], ["x"]),
        "null-request.har": variant(entry + ["request"], None),
        "bad-base64.har": variant(entry + ["response", "content"], {"size": 1, "mimeType": "x", "text": "%%%", "encoding": "base64"}),
        "bad-date.har": variant(entry + ["startedDateTime"], "yesterday"),
        "bad-url.har": variant(entry + ["request", "url"], "http://[::1"),
        "huge-string.har": variant(entry + ["response", "content", "text"], "A" * (20 << 20)),
        "huge-header.har": variant(entry + ["request", "headers"], [{"name": "X", "value": "v" * (5 << 20)}]),
        "many-entries.har": json.dumps({"log": {"version": "1.2", "entries": good["log"]["entries"] * 20000}}).encode(),
        "deep-nesting.har": b'{"log":{"entries":[' + b"[" * 100000 + b"]" * 100000 + b"]}}",
        "deep-nesting-objects.har": b'{"log":' + b'{"a":' * 50000 + b"1" + b"}" * 50000 + b"}",
        "truncated.har": json.dumps(good).encode()[:300],
        "not-har.har": b'{"hello": "world"}',
        "empty-object.har": b"{}",
        "utf16.har": json.dumps(good).encode("utf-16"),
        "nul-bytes.har": json.dumps(good).encode().replace(b'"ok"', b'"o\\u0000k"'),
        "invalid-utf8.har": json.dumps(good).encode().replace(b'"ok"', b'"\xff\xfe"'),
    }
    return out


def large(path, megabytes):
    """Many copies of the baseline's connections, each on its own client port."""
    body = b"<html>" + b"<p>h5 page of a large capture</p>" * 400 + b"</html>"
    with open(path, "wb") as f:
        f.write(pcap([]))
        written, port, t = 0, 1024, 1_700_000_000.0
        while written < megabytes << 20:
            port = port + 1 if port < 65000 else 1025
            for p in connection(GET, http_response(body, b"Set-Cookie: seen=1; Path=/\r\n"), port=port):
                t += 0.0001
                record = struct.pack("<IIII", int(t), int((t % 1) * 1e6), len(p), len(p)) + p
                f.write(record)
                written += len(record)


def main():
    if sys.argv[1] == "--large":
        large(sys.argv[2], int(sys.argv[3]))
        return
    out = sys.argv[1]
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    rng = random.Random(7)
    base = pcap(baseline())
    with open(os.path.join(out, "baseline.pcap"), "wb") as f:
        f.write(base)
    # Truncated at every record boundary and 7 bytes into every record.
    off, k = 24, 0
    while off < len(base):
        incl = struct.unpack("<I", base[off + 8:off + 12])[0]
        for cut, tag in ((off, "at"), (off + 7, "inside")):
            with open(os.path.join(out, f"truncated-{tag}-record-{k:03d}.pcap"), "wb") as f:
                f.write(base[:cut])
        off += 16 + incl
        k += 1
    for cut in (1, 3, 10, 23):
        with open(os.path.join(out, f"truncated-header-{cut:02d}.pcap"), "wb") as f:
            f.write(base[:cut])
    # Corrupted at several rates, by editcap when it is installed.
    editcap = shutil.which("editcap")
    for rate in (0.001, 0.01, 0.05, 0.2, 0.5):
        for seed in range(3):
            path = os.path.join(out, f"corrupt-{rate}-{seed}.pcap")
            if editcap:
                subprocess.run([editcap, "-E", str(rate), "-F", "pcap", os.path.join(out, "baseline.pcap"), path], check=True, capture_output=True)
            else:
                with open(path, "wb") as f:
                    f.write(corrupt(base, rate, rng))
    with open(os.path.join(out, "corrupt-global-header.pcap"), "wb") as f:
        f.write(base[:20] + b"\xff\xff\xff\xff" + base[24:])
    with open(os.path.join(out, "corrupt-record-length.pcap"), "wb") as f:
        f.write(base[:32] + struct.pack("<I", 0x7FFFFFFF) + base[36:])
    with open(os.path.join(out, "unknown-linktype.pcap"), "wb") as f:
        f.write(base[:20] + struct.pack("<I", 147) + base[24:])
    for name, (request, response) in framing_attacks().items():
        with open(os.path.join(out, f"http-{name}.pcap"), "wb") as f:
            f.write(pcap(connection(request, response)))
    for name, response in bombs().items():
        with open(os.path.join(out, f"{name}.pcap"), "wb") as f:
            f.write(pcap(connection(GET, response)))
    for name, data in hars().items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    for name, data in compressed(base, rng).items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(len(os.listdir(out)))


def compressed(capture, rng):
    """Compressed recordings: one name extension each, so the recording's name is the stem."""
    har = json.dumps({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": []}}).encode()
    gz = gzip.compress(capture, mtime=0)
    out = {"gzip-capture.gz": gz, "zlib-capture.zhar": zlib.compress(capture, 9), "gzip-har.gz": gzip.compress(har, mtime=0)}
    for frac in (0.1, 0.5, 0.9, 0.999):
        out[f"gzip-capture-cut-{frac}.gz"] = gz[: int(len(gz) * frac)]
    out["gzip-har-cut.gz"] = gzip.compress(har, mtime=0)[:-10]
    out["gzip-header-only.gz"] = gz[:10]
    for seed in range(3):
        out[f"gzip-capture-corrupt-{seed}.gz"] = corrupt_stream(gz, 0.01, rng)
    out["gzip-capture-padded.gz"] = gz + b"\0" * 512
    out["gzip-text.gz"] = gzip.compress(b"hello, this is no recording\n" * 100, mtime=0)
    out["zlib-random.zhar"] = zlib.compress(bytes(rng.randrange(256) for _ in range(4096)))
    return out


def corrupt_stream(data, rate, rng):
    """Each byte after the 10-byte gzip header changed with probability `rate`."""
    body = bytearray(data)
    for i in range(10, len(body)):
        if rng.random() < rate:
            body[i] = rng.randrange(256)
    return bytes(body)


if __name__ == "__main__":
    main()
