"""cites_ticket: 1 if the answer cites a ticket of the sample, else 0."""
import json
import re
import sys

payload = json.load(sys.stdin)
if payload["version"] != 1:
    sys.exit(f"cites_ticket.py understands payload version 1, got {payload['version']}")
answer = payload["response"]["output"]
known = {str(t) for t in payload["sample"]["metadata"].get("tickets", [])}
cited = set(re.findall(r"#(\d+)", answer))
good = sorted(cited & known)
print(json.dumps({
    "score": 1.0 if good else 0.0,
    "reason": f"cites {', '.join('#' + t for t in good)}" if good
              else f"cites none of {sorted(known)} (found {sorted(cited)})",
}))
