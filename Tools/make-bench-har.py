#!/usr/bin/env python3
"""Writes a large HAR for Tools/bench: the bundled flows repeated, each copy on its own
host and an hour later, so redirect chains, cookies and bodies stay realistic.
Usage: Tools/make-bench-har.py OUT.har [ENTRIES]   (default 20000 entries)"""
import copy, glob, json, sys
from datetime import datetime, timedelta

out = sys.argv[1]
target = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
flows = []
for path in sorted(glob.glob("Recordings/*.har")):
    if "large-text-body" in path:
        continue  # one 3 MiB body would dominate the file
    flows.append(json.load(open(path))["log"]["entries"])
entries = []
copy_index = 0
while len(entries) < target:
    for flow in flows:
        for e in flow:
            e = copy.deepcopy(e)
            start = datetime.fromisoformat(e["startedDateTime"].replace("Z", "+00:00")) + timedelta(hours=copy_index)
            e["startedDateTime"] = start.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            e["request"]["url"] = e["request"]["url"].replace(".example.com", f".c{copy_index}.example.com")
            entries.append(e)
        copy_index += 1
        if len(entries) >= target:
            break
json.dump({"log": {"version": "1.2", "creator": {"name": "h5replay bench", "version": "1"}, "entries": entries[:target]}}, open(out, "w"))
print(f"{out}: {min(len(entries), target)} entries")
