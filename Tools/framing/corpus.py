#!/usr/bin/python3
"""The framing corpus: HTTP/1.x responses with the oddities real servers send and browsers
decode anyway (chunking, Transfer-Encoding and Content-Length conflicts, status-line and
header-line oddities, HTTP/0.9-style answers, content codings and their layering; after
the published HTTP-evader research).

  Tools/framing/corpus.py        writes Tests/PacketCaptureTests/Framing/corpus.json

Each case is the raw bytes a server sends on a fresh connection, then closes. The engines'
truths (what Chromium and WebKitGTK handed the page) are added by Tools/framing/record;
regenerating keeps the truths of cases whose bytes did not change. Needs python3-brotli
(Debian) only to regenerate.
"""
import base64
import gzip
import json
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "Tests/PacketCaptureTests/Framing/corpus.json")

BODY = b"hello, framing\n"


def gz(data, mtime=0):
    return gzip.compress(data, mtime=mtime)


def zl(data):
    return zlib.compress(data)


def raw_deflate(data):
    c = zlib.compressobj(wbits=-15)
    return c.compress(data) + c.flush()


def br(data):
    import brotli  # noqa: PLC0415 (only needed to regenerate)
    return brotli.compress(data)


def head(*lines, status=b"HTTP/1.1 200 OK", end=b"\r\n"):
    return status + end + b"".join(line + end for line in lines) + end


def chunked(*chunks, last=b"0\r\n\r\n"):
    return b"".join(b"%x\r\n" % len(c) + c + b"\r\n" for c in chunks) + last


CASES = []


def case(group, cid, title, data):
    CASES.append({"id": f"{group}-{cid}", "group": group, "title": title, "response": data})


CT = b"Content-Type: text/plain"
CL = b"Content-Length: %d" % len(BODY)
TE = b"Transfer-Encoding: chunked"

# --- Chunked bodies -------------------------------------------------------------------------
A, B = BODY[:6], BODY[6:]
case("chunk", "baseline", "two chunks and the last chunk", head(CT, TE) + chunked(A, B))
case("chunk", "one-big", "one chunk", head(CT, TE) + chunked(BODY))
case("chunk", "many-small", "one byte per chunk", head(CT, TE) + chunked(*[BODY[i:i + 1] for i in range(len(BODY))]))
case("chunk", "upper-hex", "chunk size in upper-case hex", head(CT, TE) + b"F\r\n" + BODY + b"\r\n0\r\n\r\n")
case("chunk", "lower-hex", "chunk size in lower-case hex", head(CT, TE) + b"f\r\n" + BODY + b"\r\n0\r\n\r\n")
case("chunk", "leading-zeros", "chunk size with leading zeros", head(CT, TE) + b"0006\r\n" + A + b"\r\n0009\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "extension", "chunk extension", head(CT, TE) + b"6;name=value\r\n" + A + b"\r\n9\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "extension-quoted", "chunk extension with a quoted string", head(CT, TE) + b"6;name=\"a;b\"\r\n" + A + b"\r\n9\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "extension-empty", "chunk size followed by a bare semicolon", head(CT, TE) + b"6;\r\n" + A + b"\r\n9\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "extension-space", "space between size and extension", head(CT, TE) + b"6 ;x=1\r\n" + A + b"\r\n9\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "trailing-space", "chunk size followed by a space", head(CT, TE) + b"6 \r\n" + A + b"\r\n9 \r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "trailing-tab", "chunk size followed by a tab", head(CT, TE) + b"6\t\r\n" + A + b"\r\n9\t\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "leading-space", "chunk size preceded by a space", head(CT, TE) + b" 6\r\n" + A + b"\r\n 9\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "junk-after-size", "junk after the chunk size", head(CT, TE) + b"6 junk\r\n" + A + b"\r\n9 junk\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "junk-glued", "letters glued to the chunk size", head(CT, TE) + b"6x\r\n" + A + b"\r\n9x\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "bare-cr-size", "chunk-size lines ending in a bare CR", head(CT, TE) + b"6\r" + A + b"\r\n9\r" + B + b"\r\n0\r\r\n")
case("chunk", "bare-lf-size", "chunk-size lines ending in a bare LF", head(CT, TE) + b"6\n" + A + b"\r\n9\n" + B + b"\r\n0\n\r\n")
case("chunk", "bare-lf-data", "chunk data ending in a bare LF", head(CT, TE) + b"6\r\n" + A + b"\n9\r\n" + B + b"\n0\r\n\r\n")
case("chunk", "bare-lf-all", "every chunk line ending in a bare LF", head(CT, TE) + b"6\n" + A + b"\n9\n" + B + b"\n0\n\n")
case("chunk", "no-data-crlf", "chunk data without its CRLF", head(CT, TE) + b"6\r\n" + A + b"9\r\n" + B + b"0\r\n\r\n")
case("chunk", "cr-cr-lf", "chunk data ending in CR CR LF", head(CT, TE) + b"6\r\n" + A + b"\r\r\n9\r\n" + B + b"\r\r\n0\r\n\r\n")
case("chunk", "lf-cr", "chunk lines ending in LF CR", head(CT, TE) + b"6\n\r" + A + b"\n\r9\n\r" + B + b"\n\r0\n\r\n\r")
case("chunk", "no-final-crlf", "the last chunk without the final CRLF, then close", head(CT, TE) + chunked(A, B, last=b"0\r\n"))
case("chunk", "no-last-chunk", "no last chunk, then close", head(CT, TE) + chunked(A, B, last=b""))
case("chunk", "cut-in-data", "closed in the middle of a chunk", head(CT, TE) + b"6\r\n" + A + b"\r\n20\r\n" + B)
case("chunk", "cut-in-size", "closed in the middle of a chunk-size line", head(CT, TE) + b"6\r\n" + A + b"\r\n9")
case("chunk", "size-too-big", "chunk size over the data, then close", head(CT, TE) + b"6\r\n" + A + b"\r\n90\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "size-too-small", "chunk size under the data", head(CT, TE) + b"6\r\n" + A + b"\r\n3\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "negative", "a negative chunk size", head(CT, TE) + b"6\r\n" + A + b"\r\n-9\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "hex-prefix", "chunk size with a 0x prefix", head(CT, TE) + b"0x6\r\n" + A + b"\r\n0x9\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "plus-sign", "chunk size with a plus sign", head(CT, TE) + b"+6\r\n" + A + b"\r\n+9\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "overflow", "chunk size over 64 bits", head(CT, TE) + b"10000000000000006\r\n" + A + b"\r\n0\r\n\r\n")
case("chunk", "empty-size", "an empty chunk-size line", head(CT, TE) + b"\r\n6\r\n" + A + b"\r\n0\r\n\r\n")
case("chunk", "nul-after-size", "a NUL after the chunk size", head(CT, TE) + b"6\x00\r\n" + A + b"\r\n9\r\n" + B + b"\r\n0\r\n\r\n")
case("chunk", "trailers", "trailer fields after the last chunk", head(CT, TE, b"Trailer: X-Checksum") + chunked(A, B, last=b"0\r\nX-Checksum: abc\r\n\r\n"))
case("chunk", "trailer-no-colon", "a trailer line without a colon", head(CT, TE) + chunked(A, B, last=b"0\r\nnot a field\r\n\r\n"))
case("chunk", "last-000", "the last chunk written 000", head(CT, TE) + chunked(A, B, last=b"000\r\n\r\n"))
case("chunk", "last-ext", "the last chunk with an extension", head(CT, TE) + chunked(A, B, last=b"0;done\r\n\r\n"))
case("chunk", "junk-after-last", "bytes after the last chunk", head(CT, TE) + chunked(A, B) + b"junk after the message")
case("chunk", "not-chunked", "labelled chunked, body not chunked", head(CT, TE) + BODY)
case("chunk", "size-decimal-looking", "chunk size 10 is sixteen bytes", head(CT, TE) + b"10\r\n" + BODY + b"!\r\n0\r\n\r\n")
case("chunk", "zero-then-data", "an empty chunk before data", head(CT, TE) + b"0\r\n\r\n" + chunked(BODY))
case("chunk", "uppercase-x", "chunk size with upper-case 0X prefix", head(CT, TE) + b"0X6\r\n" + A + b"\r\n0\r\n\r\n")
case("chunk", "space-in-size", "a space inside the chunk size", head(CT, TE) + b"1 0\r\n" + BODY + b"!\r\n0\r\n\r\n")
case("chunk", "vtab-after-size", "a vertical tab after the chunk size", head(CT, TE) + b"6\x0b\r\n" + A + b"\r\n9\r\n" + B + b"\r\n0\r\n\r\n")

# --- Transfer-Encoding ----------------------------------------------------------------------
CH = chunked(A, B)
case("te", "capitalised", "Transfer-Encoding: Chunked", head(CT, b"Transfer-Encoding: Chunked") + CH)
case("te", "upper", "Transfer-Encoding: CHUNKED", head(CT, b"Transfer-Encoding: CHUNKED") + CH)
case("te", "mixed-case", "Transfer-Encoding: cHuNkEd", head(CT, b"Transfer-Encoding: cHuNkEd") + CH)
case("te", "no-space", "Transfer-Encoding:chunked", head(CT, b"Transfer-Encoding:chunked") + CH)
case("te", "tab", "a tab before the value", head(CT, b"Transfer-Encoding:\tchunked") + CH)
case("te", "trailing-space", "a space after the value", head(CT, b"Transfer-Encoding: chunked ") + CH)
case("te", "lower-name", "the header name in lower case", head(CT, b"transfer-encoding: chunked") + CH)
case("te", "space-before-colon", "a space before the colon", head(CT, b"Transfer-Encoding : chunked") + CH)
case("te", "tab-before-colon", "a tab before the colon", head(CT, b"Transfer-Encoding\t: chunked") + CH)
case("te", "underscore-name", "Transfer_Encoding: chunked", head(CT, b"Transfer_Encoding: chunked") + CH)
case("te", "folded", "the value folded onto a continuation line", head(CT, b"Transfer-Encoding:", b" chunked") + CH)
case("te", "folded-tab", "the value folded onto a tab continuation line", head(CT, b"Transfer-Encoding:", b"\tchunked") + CH)
case("te", "folded-after-value", "identity folded before chunked", head(CT, b"Transfer-Encoding: identity", b" chunked") + CH)
case("te", "folded-into-other", "chunked folded into another header", head(CT, b"X-Other: a", b" Transfer-Encoding: chunked") + CH)
case("te", "chunked-chunked", "Transfer-Encoding: chunked, chunked", head(CT, b"Transfer-Encoding: chunked, chunked") + CH)
case("te", "two-headers", "two Transfer-Encoding: chunked headers", head(CT, TE, TE) + CH)
case("te", "identity-then-chunked", "Transfer-Encoding: identity, then chunked", head(CT, b"Transfer-Encoding: identity", TE) + CH)
case("te", "chunked-then-identity", "Transfer-Encoding: chunked, then identity", head(CT, TE, b"Transfer-Encoding: identity") + CH)
case("te", "identity-list", "Transfer-Encoding: identity, chunked", head(CT, b"Transfer-Encoding: identity, chunked") + CH)
case("te", "chunked-identity-list", "Transfer-Encoding: chunked, identity", head(CT, b"Transfer-Encoding: chunked, identity") + CH)
case("te", "identity-only", "Transfer-Encoding: identity, body until close", head(CT, b"Transfer-Encoding: identity") + BODY)
case("te", "unknown-only", "Transfer-Encoding: foo, body until close", head(CT, b"Transfer-Encoding: foo") + BODY)
case("te", "xchunked", "Transfer-Encoding: xchunked", head(CT, b"Transfer-Encoding: xchunked") + BODY)
case("te", "x-chunked-chunked-body", "Transfer-Encoding: x-chunked with a chunked body", head(CT, b"Transfer-Encoding: x-chunked") + CH)
case("te", "quoted", "Transfer-Encoding: \"chunked\"", head(CT, b"Transfer-Encoding: \"chunked\"") + CH)
case("te", "empty", "an empty Transfer-Encoding with Content-Length", head(CT, b"Transfer-Encoding:", CL) + BODY)
case("te", "vtab", "a vertical tab after chunked", head(CT, b"Transfer-Encoding: chunked\x0b") + CH)
case("te", "http10", "chunked in an HTTP/1.0 response", head(CT, TE, status=b"HTTP/1.0 200 OK") + CH)
case("te", "http10-with-cl", "chunked and Content-Length in an HTTP/1.0 response", head(CT, TE, b"Content-Length: %d" % len(CH), status=b"HTTP/1.0 200 OK") + CH)
case("te", "with-cl", "chunked beside a Content-Length of the chunked bytes", head(CT, TE, b"Content-Length: %d" % len(CH)) + CH)
case("te", "with-cl-short", "chunked beside a short Content-Length", head(CT, TE, b"Content-Length: 3") + CH)
case("te", "cl-first", "Content-Length before chunked", head(CT, b"Content-Length: 3", TE) + CH)
case("te", "gzip-chunked", "Transfer-Encoding: gzip, chunked", head(CT, b"Transfer-Encoding: gzip, chunked") + chunked(gz(BODY)))
case("te", "chunked-gzip", "Transfer-Encoding: chunked, gzip (chunked not last)", head(CT, b"Transfer-Encoding: chunked, gzip") + chunked(gz(BODY)))
case("te", "gzip-only", "Transfer-Encoding: gzip, gzip body until close", head(CT, b"Transfer-Encoding: gzip") + gz(BODY))
case("te", "deflate-chunked", "Transfer-Encoding: deflate, chunked", head(CT, b"Transfer-Encoding: deflate, chunked") + chunked(zl(BODY)))
case("te", "with-close", "chunked with Connection: close", head(CT, TE, b"Connection: close") + CH)
case("te", "on-204", "chunked on a 204", head(TE, status=b"HTTP/1.1 204 No Content") + CH)
case("te", "on-304", "chunked on a 304", head(TE, status=b"HTTP/1.1 304 Not Modified") + CH)
case("te", "comma-only", "Transfer-Encoding: ,chunked", head(CT, b"Transfer-Encoding: ,chunked") + CH)
case("te", "semicolon-param", "Transfer-Encoding: chunked;q=1", head(CT, b"Transfer-Encoding: chunked;q=1") + CH)
case("te", "nul-in-value", "a NUL after chunked", head(CT, b"Transfer-Encoding: chunked\x00") + CH)

# --- Content-Length -------------------------------------------------------------------------
case("cl", "baseline", "Content-Length matching the body", head(CT, CL) + BODY)
case("cl", "short", "Content-Length under the body (the rest ignored)", head(CT, b"Content-Length: 5") + BODY)
case("cl", "long", "Content-Length over the body, then close", head(CT, b"Content-Length: 50") + BODY)
case("cl", "zero", "Content-Length: 0 with bytes after", head(CT, b"Content-Length: 0") + BODY)
case("cl", "two-same", "two equal Content-Length headers", head(CT, CL, CL) + BODY)
case("cl", "two-differ", "two different Content-Length headers", head(CT, CL, b"Content-Length: 5") + BODY)
case("cl", "two-differ-rev", "two different Content-Length headers, the short first", head(CT, b"Content-Length: 5", CL) + BODY)
case("cl", "list-same", "Content-Length: N, N", head(CT, b"Content-Length: %d, %d" % (len(BODY), len(BODY))) + BODY)
case("cl", "list-differ", "Content-Length: N, 5", head(CT, b"Content-Length: %d, 5" % len(BODY)) + BODY)
case("cl", "leading-zeros", "Content-Length with leading zeros", head(CT, b"Content-Length: 000%d" % len(BODY)) + BODY)
case("cl", "plus", "Content-Length with a plus sign", head(CT, b"Content-Length: +%d" % len(BODY)) + BODY)
case("cl", "negative", "Content-Length: -1, body until close", head(CT, b"Content-Length: -1") + BODY)
case("cl", "spaces", "spaces around the Content-Length value", head(CT, b"Content-Length:   %d   " % len(BODY)) + BODY)
case("cl", "inner-space", "a space inside the Content-Length value", head(CT, b"Content-Length: 1 5") + BODY)
case("cl", "hex", "Content-Length in hex", head(CT, b"Content-Length: 0xf") + BODY)
case("cl", "empty", "an empty Content-Length, body until close", head(CT, b"Content-Length:") + BODY)
case("cl", "letters", "Content-Length: abc, body until close", head(CT, b"Content-Length: abc") + BODY)
case("cl", "overflow", "Content-Length over 64 bits", head(CT, b"Content-Length: 99999999999999999999999") + BODY)
case("cl", "decimal-point", "Content-Length: N.0", head(CT, b"Content-Length: %d.0" % len(BODY)) + BODY)
case("cl", "space-before-colon", "a space before the colon", head(CT, b"Content-Length : 5") + BODY)
case("cl", "folded", "the value folded onto a continuation line", head(CT, b"Content-Length:", b" 5") + BODY)
case("cl", "none-close", "no Content-Length: body until close", head(CT) + BODY)
case("cl", "none-http10", "HTTP/1.0, no Content-Length: body until close", head(CT, status=b"HTTP/1.0 200 OK") + BODY)
case("cl", "on-204", "Content-Length on a 204 with a body", head(CL, status=b"HTTP/1.1 204 No Content") + BODY)
case("cl", "on-304", "Content-Length on a 304 with a body", head(CL, status=b"HTTP/1.1 304 Not Modified") + BODY)
case("cl", "on-205", "a body on a 205", head(CL, status=b"HTTP/1.1 205 Reset Content") + BODY)
case("cl", "tab-value", "a tab before the value", head(CT, b"Content-Length:\t5") + BODY)
case("cl", "semicolon", "Content-Length: 5;", head(CT, b"Content-Length: 5;") + BODY)

# --- Status line ----------------------------------------------------------------------------
OK = head(CT, CL)[len(b"HTTP/1.1 200 OK\r\n"):] + BODY  # the headers and body after a status line


def status(line):
    return line + b"\r\n" + OK


case("status", "no-reason", "a status line without a reason", status(b"HTTP/1.1 200"))
case("status", "empty-reason", "a status line ending in a space", status(b"HTTP/1.1 200 "))
case("status", "long-reason", "a reason with spaces", status(b"HTTP/1.1 200 Very Much OK"))
case("status", "tab", "a tab before the reason", status(b"HTTP/1.1 200\tOK"))
case("status", "double-space", "two spaces before the code", status(b"HTTP/1.1  200 OK"))
case("status", "lowercase", "http/1.1 in lower case", status(b"http/1.1 200 OK"))
case("status", "http12", "HTTP/1.2", status(b"HTTP/1.2 200 OK"))
case("status", "http20", "HTTP/2.0 on an HTTP/1 connection", status(b"HTTP/2.0 200 OK"))
case("status", "http1", "HTTP/1 without a minor version", status(b"HTTP/1 200 OK"))
case("status", "no-version", "HTTP without a version", status(b"HTTP 200 OK"))
case("status", "http09-version", "HTTP/0.9 in a status line", status(b"HTTP/0.9 200 OK"))
case("status", "four-digits", "a four-digit status", status(b"HTTP/1.1 2000 OK"))
case("status", "two-digits", "a two-digit status", status(b"HTTP/1.1 20 OK"))
case("status", "099", "status 099", status(b"HTTP/1.1 099 OK"))
case("status", "600", "status 600", status(b"HTTP/1.1 600 OK"))
case("status", "999", "status 999", status(b"HTTP/1.1 999 OK"))
case("status", "glued-reason", "the reason glued to the code", status(b"HTTP/1.1 200OK"))
case("status", "letters", "letters for a code", status(b"HTTP/1.1 abc OK"))
case("status", "leading-space", "a space before HTTP/", status(b" HTTP/1.1 200 OK"))
case("status", "leading-crlf", "an empty line before the status line", b"\r\n" + status(b"HTTP/1.1 200 OK"))
case("status", "leading-junk", "a junk line before the status line", b"junk\r\n" + status(b"HTTP/1.1 200 OK"))
case("status", "icy", "ICY 200 OK (Shoutcast)", status(b"ICY 200 OK"))
case("status", "bare-cr", "a status line ending in a bare CR", b"HTTP/1.1 200 OK\r" + OK)
case("status", "utf8-reason", "a UTF-8 reason phrase", status("HTTP/1.1 200 Très bien".encode()))
case("status", "nul-reason", "a NUL in the reason", status(b"HTTP/1.1 200 O\x00K"))
case("status", "continue-first", "100 Continue before the answer", b"HTTP/1.1 100 Continue\r\n\r\n" + status(b"HTTP/1.1 200 OK"))
case("status", "two-interim", "103 and 100 before the answer", b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n" + status(b"HTTP/1.1 200 OK"))
case("status", "201", "201 Created with a body", status(b"HTTP/1.1 201 Created"))
case("status", "404", "404 with a body", status(b"HTTP/1.1 404 Not Found"))
case("status", "500", "500 with a body", status(b"HTTP/1.1 500 Internal Server Error"))
case("status", "only-head", "a head and no body, then close", head(CT, status=b"HTTP/1.1 200 OK"))
case("status", "cut-in-head", "closed in the middle of the head", b"HTTP/1.1 200 OK\r\nContent-Ty")

# --- Header lines ---------------------------------------------------------------------------
case("header", "obs-fold", "a header folded onto a continuation line", head(CT, CL, b"X-Long: part one", b"  part two") + BODY)
case("header", "no-colon", "a header line without a colon", head(CT, CL, b"this is not a field") + BODY)
case("header", "space-before-colon", "a space before a header's colon", head(b"Content-Type : text/plain", CL) + BODY)
case("header", "bad-name-char", "a header name with @", head(CT, CL, b"X@Y: 1") + BODY)
case("header", "empty-name", "a header with an empty name", head(CT, CL, b": value") + BODY)
case("header", "nul-value", "a NUL in a header value", head(CT, CL, b"X-Nul: a\x00b") + BODY)
case("header", "cr-in-value", "a bare CR in a header value", head(CT, CL, b"X-Cr: a\rb") + BODY)
case("header", "utf8-value", "a UTF-8 header value", head(CT, CL, "X-Name: Zoë".encode()) + BODY)
case("header", "latin1-value", "a Latin-1 header value", head(CT, CL, b"X-Name: Zo\xeb") + BODY)
case("header", "long-value", "a 16 KB header value", head(CT, CL, b"X-Long: " + b"a" * 16384) + BODY)
case("header", "many-headers", "200 header fields", head(CT, CL, *[b"X-H%d: %d" % (i, i) for i in range(200)]) + BODY)
case("header", "bare-lf", "every head line ending in a bare LF", head(CT, CL, end=b"\n") + BODY)
case("header", "lf-lf-end", "the head ending in LF LF after CRLF lines", b"HTTP/1.1 200 OK\r\n" + CT + b"\r\n" + CL + b"\n\n" + BODY)
case("header", "crlf-lf-end", "the head ending in CRLF LF", b"HTTP/1.1 200 OK\r\n" + CT + b"\r\n" + CL + b"\r\n\n" + BODY)
case("header", "lf-crlf-end", "the head ending in LF CRLF", b"HTTP/1.1 200 OK\r\n" + CT + b"\r\n" + CL + b"\n\r\n" + BODY)
case("header", "bare-cr-lines", "head lines ending in a bare CR", b"HTTP/1.1 200 OK\r" + CT + b"\r" + CL + b"\r\r" + BODY)
case("header", "cr-cr-lf", "head lines ending in CR CR LF", b"HTTP/1.1 200 OK\r\r\n" + CT + b"\r\r\n" + CL + b"\r\r\n\r\n" + BODY)
case("header", "first-line-folded", "the first header line starting with a space", head(b" X-Fold: 1", CT, CL) + BODY)
case("header", "tab-value", "a tab inside a header value", head(CT, CL, b"X-Tab: a\tb") + BODY)
case("header", "no-space-after-colon", "no space after any colon", head(b"Content-Type:text/plain", b"Content-Length:%d" % len(BODY)) + BODY)
case("header", "trailing-whitespace", "trailing spaces and tabs after values", head(b"Content-Type: text/plain \t", CL + b"  ") + BODY)
case("header", "duplicate-ct", "two Content-Type headers", head(CT, b"Content-Type: text/html", CL) + BODY)
case("header", "connection-close", "Connection: close with Content-Length", head(CT, CL, b"Connection: close") + BODY)
case("header", "keep-alive-10", "HTTP/1.0 with keep-alive and Content-Length", head(CT, CL, b"Connection: keep-alive", status=b"HTTP/1.0 200 OK") + BODY)
case("header", "space-line", "a line of only a space inside the head", head(CT, CL, b" ") + BODY)
case("header", "colon-only", "a line of only a colon", head(CT, CL, b":") + BODY)

# --- HTTP/0.9-style answers ------------------------------------------------------------------
case("http09", "text", "a body with no status line or head", BODY)
case("http09", "html", "an HTML page with no status line", b"<!doctype html><title>x</title>hello\n")
case("http09", "empty", "the connection closed with no bytes", b"")
case("http09", "partial-status", "HTTP/1.1 and nothing more", b"HTTP/1.1")
case("http09", "binary", "binary bytes with no status line", bytes(range(256)))
case("http09", "almost-http", "HTTP/ followed by junk", b"HTTP/junk\r\n\r\n" + BODY)
case("http09", "lowercase-body", "a body starting with http", b"http is great\n")

# --- Content codings ------------------------------------------------------------------------


def coded(coding, data, *extra):
    return head(CT, b"Content-Encoding: " + coding, b"Content-Length: %d" % len(data), *extra) + data


case("coding", "gzip", "gzip", coded(b"gzip", gz(BODY)))
case("coding", "x-gzip", "x-gzip", coded(b"x-gzip", gz(BODY)))
case("coding", "gzip-upper", "GZIP in upper case", coded(b"GZIP", gz(BODY)))
case("coding", "gzip-space", "gzip with spaces around it", coded(b" gzip ", gz(BODY)))
case("coding", "deflate-zlib", "deflate, zlib-wrapped", coded(b"deflate", zl(BODY)))
case("coding", "deflate-raw", "deflate, raw (no zlib wrapper)", coded(b"deflate", raw_deflate(BODY)))
case("coding", "br", "br", coded(b"br", br(BODY)))
case("coding", "identity", "identity", coded(b"identity", BODY))
case("coding", "identity-gzip", "identity, gzip", coded(b"identity, gzip", gz(BODY)))
case("coding", "gzip-gzip", "gzip, gzip layered", coded(b"gzip, gzip", gz(gz(BODY))))
case("coding", "deflate-gzip", "deflate, gzip layered", coded(b"deflate, gzip", gz(zl(BODY))))
case("coding", "gzip-deflate", "gzip, deflate layered", coded(b"gzip, deflate", zl(gz(BODY))))
case("coding", "gzip-br", "gzip, br layered", coded(b"gzip, br", br(gz(BODY))))
case("coding", "two-headers", "two Content-Encoding: gzip headers, gzipped twice", head(CT, b"Content-Encoding: gzip", b"Content-Encoding: gzip", b"Content-Length: %d" % len(gz(gz(BODY)))) + gz(gz(BODY)))
case("coding", "two-headers-once", "two Content-Encoding: gzip headers, gzipped once", head(CT, b"Content-Encoding: gzip", b"Content-Encoding: gzip", b"Content-Length: %d" % len(gz(BODY))) + gz(BODY))
case("coding", "double-label-once", "gzip, gzip over a body gzipped once", coded(b"gzip, gzip", gz(BODY)))
case("coding", "gzip-label-plain", "labelled gzip, body plain", coded(b"gzip", BODY))
case("coding", "gzip-label-deflate", "labelled gzip, body deflate", coded(b"gzip", zl(BODY)))
case("coding", "deflate-label-gzip", "labelled deflate, body gzip", coded(b"deflate", gz(BODY)))
case("coding", "deflate-label-plain", "labelled deflate, body plain", coded(b"deflate", BODY))
case("coding", "br-label-gzip", "labelled br, body gzip", coded(b"br", gz(BODY)))
case("coding", "br-label-plain", "labelled br, body plain", coded(b"br", BODY))
case("coding", "unknown", "an unknown coding over a plain body", coded(b"foo", BODY))
case("coding", "compress", "compress over a plain body", coded(b"compress", BODY))
case("coding", "gzip-truncated", "gzip cut short", coded(b"gzip", gz(BODY)[:-6]))
case("coding", "gzip-no-trailer", "gzip without its CRC and size", coded(b"gzip", gz(BODY)[:-8]))
case("coding", "gzip-bad-crc", "gzip with a wrong CRC", coded(b"gzip", gz(BODY)[:-8] + b"\0\0\0\0" + gz(BODY)[-4:]))
case("coding", "gzip-trailing-junk", "gzip followed by junk", coded(b"gzip", gz(BODY) + b"junk"))
case("coding", "gzip-members", "two gzip members", coded(b"gzip", gz(A) + gz(B)))
case("coding", "gzip-empty-body", "labelled gzip, empty body", coded(b"gzip", b""))
case("coding", "gzip-chunked", "gzip over chunked", head(CT, b"Content-Encoding: gzip", TE) + chunked(gz(BODY)[:10], gz(BODY)[10:]))
case("coding", "gzip-until-close", "gzip, body until close", head(CT, b"Content-Encoding: gzip") + gz(BODY))
case("coding", "deflate-truncated", "deflate cut short", coded(b"deflate", zl(BODY)[:-6]))
case("coding", "br-truncated", "br cut short", coded(b"br", br(BODY)[:-3]))
case("coding", "gzip-te-and-ce", "Transfer-Encoding gzip and Content-Encoding gzip", head(CT, b"Content-Encoding: gzip", b"Transfer-Encoding: gzip, chunked") + chunked(gz(gz(BODY))))
case("coding", "comma-empty", "Content-Encoding: gzip,", coded(b"gzip,", gz(BODY)))
case("coding", "gzip-on-204", "gzip on a 204", head(b"Content-Encoding: gzip", status=b"HTTP/1.1 204 No Content"))
case("coding", "gzip-on-404", "gzip on a 404", head(CT, b"Content-Encoding: gzip", b"Content-Length: %d" % len(gz(BODY)), status=b"HTTP/1.1 404 Not Found") + gz(BODY))
case("coding", "zstd-label-plain", "labelled zstd, body plain", coded(b"zstd", BODY))
case("coding", "large-gzip", "a 200 KB gzip body", coded(b"gzip", gz(BODY * 14000)))


def main():
    old = {}
    if os.path.exists(OUT):
        with open(OUT) as f:
            for c in json.load(f)["cases"]:
                old[c["id"]] = c
    ids = [c["id"] for c in CASES]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        sys.exit(f"corpus: duplicate case ids {sorted(dup)}")
    out = []
    for c in CASES:
        entry = {"id": c["id"], "group": c["group"], "title": c["title"], "response": base64.b64encode(c["response"]).decode()}
        prior = old.get(c["id"])
        if prior and prior["response"] == entry["response"] and "engines" in prior:
            entry["engines"] = prior["engines"]
        out.append(entry)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"about": "Raw HTTP/1.x responses with framing and coding oddities, and what Chromium and WebKitGTK handed the page for each (Tools/framing/corpus.py, Tools/framing/record).", "cases": out}, f, indent=1)
        f.write("\n")
    print(f"corpus: {len(out)} cases in {os.path.relpath(OUT, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
