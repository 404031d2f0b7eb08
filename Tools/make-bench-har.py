#!/usr/bin/env python3
"""Writes a large HAR for Tools/bench: the bundled flows repeated, each copy on its own
host and an hour later, so redirect chains, cookies and bodies stay realistic.
Usage: Tools/make-bench-har.py OUT.har [ENTRIES]   (default 20000 entries)
       Tools/make-bench-har.py --corpus OUTDIR RECORDINGS ENTRIES
           a corpus of RECORDINGS files of ENTRIES entries each (the bench's CI figure)"""
import copy, glob, json, os, sys
from datetime import datetime, timedelta

corpus = len(sys.argv) == 5 and sys.argv[1] == "--corpus"
out = sys.argv[2] if corpus else sys.argv[1]
target = int(sys.argv[3]) * int(sys.argv[4]) if corpus else int(sys.argv[2]) if len(sys.argv) > 2 else 20000
flows = []
# The bundled flows, wherever the script is run from.
recordings = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Recordings")
for path in sorted(glob.glob(os.path.join(recordings, "*.har"))):
    if "large-text-body" in path:
        continue  # one 3 MiB body would dominate the file
    flows.append(json.load(open(path))["log"]["entries"])
if not any(flows):
    sys.exit(f"make-bench-har: no HAR entries in {os.path.normpath(recordings)}")
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
def write(path, part):
    json.dump({"log": {"version": "1.2", "creator": {"name": "h5replay bench", "version": "1"}, "entries": part}}, open(path, "w"))


if corpus:
    import os
    os.makedirs(out, exist_ok=True)
    count, size = int(sys.argv[3]), int(sys.argv[4])
    for k in range(count):
        write(f"{out}/flow-{k:05d}.har", entries[k * size:(k + 1) * size])
    print(f"{out}: {count} recordings of {size} entries")
else:
    write(out, entries[:target])
    print(f"{out}: {min(len(entries), target)} entries")
