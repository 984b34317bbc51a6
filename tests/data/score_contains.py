"""An external scorer (issue 36): `contains`, written in Python.

Reads the payload (version 1) on stdin; prints {"score", "reason"}.
A sample with one expected answer per turn scores the mean over turns.
"""
import json
import sys

payload = json.load(sys.stdin)
assert payload["version"] == 1, payload["version"]
sample, response = payload["sample"], payload["response"]
expected = sample["expected"]
if isinstance(expected, list):
    pairs = list(zip(expected, response["turn_outputs"]))
else:
    pairs = [(expected, response["output"] or " ".join(response["turn_outputs"]))]
hits = [e.lower() in o.lower() for e, o in pairs]
print(json.dumps({"score": sum(hits) / len(hits), "reason": f"{sum(hits)} of {len(hits)} found"}))
