// HTTPWire: HTTP/1.x as bytes on the wire. The incremental parser, strict or tolerant
// (`HTTPParser`), requests paired with responses on one connection (`HTTPConnection`),
// content decoding (gzip, deflate and br through zlib, libdeflate and libbrotli:
// `ContentDecoder`) and compressed input files. It builds TrafficModel's values and knows
// nothing of captures, HAR or replay.
