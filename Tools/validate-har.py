#!/usr/bin/env python3
"""Checks HAR files that h5replay exported.

1. Validates each against the HAR 1.2 JSON schemas (ahmadnassri/har-schema) in
   SCHEMA_DIR, with the jsonschema package.
2. When mitmproxy is installed, reads each entry back through mitmproxy's own HAR loader
   and checks the method, URL, status and body lengths it sees.

Usage: Tools/validate-har.py SCHEMA_DIR FILE.har...
Exit 0 when every file passes, 1 with the problems listed otherwise, 3 when jsonschema is
missing (the caller skips).
"""
import base64
import json
import os
import sys

try:
    import jsonschema
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT7
except ImportError:
    print("jsonschema is not installed (pip install jsonschema)", file=sys.stderr)
    sys.exit(3)

schema_dir, files = sys.argv[1], sys.argv[2:]
resources = []
for name in os.listdir(schema_dir):
    if name.endswith(".json"):
        doc = json.load(open(os.path.join(schema_dir, name)))
        resources.append((name, Resource.from_contents(doc, default_specification=DRAFT7)))
registry = Registry().with_resources(resources)
validator = jsonschema.Draft7Validator({"$ref": "har.json#"}, registry=registry)

try:
    from mitmproxy.io.har import request_to_flow
except Exception:
    request_to_flow = None

problems = []
for path in files:
    har = json.load(open(path))
    for error in validator.iter_errors(har):
        problems.append(f"{path}: {'/'.join(str(p) for p in error.absolute_path)}: {error.message}")
    if request_to_flow is None:
        continue
    for i, entry in enumerate(har["log"]["entries"]):
        try:
            flow = request_to_flow(entry)
        except Exception as e:  # mitmproxy could not read it
            problems.append(f"{path}: entry {i}: mitmproxy cannot read it: {e}")
            continue
        if flow.request.method != entry["request"]["method"] or flow.request.url.split("#")[0] != entry["request"]["url"].split("#")[0]:
            problems.append(f"{path}: entry {i}: mitmproxy reads {flow.request.method} {flow.request.url}")
        if flow.response.status_code != entry["response"]["status"]:
            problems.append(f"{path}: entry {i}: mitmproxy reads status {flow.response.status_code}")
        content = entry["response"]["content"]
        if "text" in content:
            expected = base64.b64decode(content["text"]) if content.get("encoding") == "base64" else None
            if expected is not None and flow.response.content != expected:
                problems.append(f"{path}: entry {i}: mitmproxy reads a different response body")

for p in problems:
    print(p)
print(f"{len(files)} HAR file(s): {'ok' if not problems else str(len(problems)) + ' problem(s)'}; schema checked" + ("; mitmproxy read them back" if request_to_flow else "; mitmproxy not installed, read-back skipped"))
sys.exit(1 if problems else 0)
