# Reads a JSON array of YAML documents on stdin, parses each with PyYAML's SafeLoader (a YAML 1.1
# reader) and writes a JSON array on stdout: {"value": <the document>} or {"error": "<message>"}.
# Whatever JSON cannot carry as itself (dates, timestamps, NaN, infinities, non-string mapping
# keys) comes out as {"python_type": ..., "repr": ...}, so the Go side sees it is not the string
# it wrote.
import json
import math
import sys

import yaml


def tagged(o):
    return {"python_type": type(o).__name__, "repr": repr(o)}


def plain(v):
    if isinstance(v, dict):
        return {(k if isinstance(k, str) else json.dumps(tagged(k))): plain(e) for k, e in v.items()}
    if isinstance(v, list):
        return [plain(e) for e in v]
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return tagged(v)
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    return tagged(v)


results = []
for doc in json.load(sys.stdin):
    try:
        results.append({"value": plain(yaml.load(doc, Loader=yaml.SafeLoader))})
    except Exception as e:  # a document PyYAML refuses is a finding, reported by the Go test
        results.append({"error": "%s: %s" % (type(e).__name__, e)})
json.dump(results, sys.stdout)
