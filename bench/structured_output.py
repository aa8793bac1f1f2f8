#!/usr/bin/env python3
"""Time per generated token of `kvscope serve` with plain sampling, response_format json_object and
response_format json_schema, on one GGUF file; optionally against a second kvscope binary (an older
build) in alternating rounds, so that drift in a shared machine's speed hits both alike.

Each request is a /v1/completions call at OpenAI's defaults (temperature 1, no top-k/top-p/min-p),
128 tokens, a fixed seed; a round starts the server, warms it with one request, and takes the median
of 3 requests per mode. Prints one line per round and binary, then per mode the median of the
per-round ratios (baseline / new) with their range when --baseline is given.

usage: bench/structured_output.py --kvscope build/release/kvscope -m model.gguf [--baseline OLD_BIN]
                                  [--rounds 4] [--threads 2] [--port 18092]
"""
import argparse, json, statistics, subprocess, time, urllib.request

SCHEMA = {"type": "json_schema",
          "json_schema": {"name": "x", "schema": {"type": "object", "properties": {"text": {"type": "string"}}}}}
MODES = {"plain": None, "json_object": {"type": "json_object"}, "json_schema": SCHEMA}


def request(port, rf, max_tokens):
    body = {"prompt": "The data:", "max_tokens": max_tokens, "seed": 1, "temperature": 1.0}
    if rf:
        body["response_format"] = rf
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    t = time.time()
    r = json.load(urllib.request.urlopen(req))
    return (time.time() - t) * 1000 / max(1, r["usage"]["completion_tokens"])


def one_round(binary, args):
    srv = subprocess.Popen([binary, "serve", "-m", args.model, "--port", str(args.port), "-t", str(args.threads)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{args.port}/health")
                break
            except Exception:
                time.sleep(0.1)
        request(args.port, None, args.max_tokens)  # warm-up
        return {m: statistics.median(request(args.port, rf, args.max_tokens) for _ in range(3)) for m, rf in MODES.items()}
    finally:
        srv.terminate()
        srv.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvscope", required=True)
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--baseline", help="another kvscope binary, run in alternating rounds")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--port", type=int, default=18092)
    ap.add_argument("--max-tokens", type=int, default=128)
    args = ap.parse_args()
    ratios = {m: [] for m in MODES}
    for rnd in range(args.rounds):
        base = one_round(args.baseline, args) if args.baseline else None
        new = one_round(args.kvscope, args)
        for name, r in (("baseline", base), ("kvscope", new)):
            if r:
                print(f"round {rnd + 1} {name}: " + ", ".join(f"{m} {v:.2f} ms/token" for m, v in r.items()), flush=True)
        if base:
            for m in MODES:
                ratios[m].append(base[m] / new[m])
    if args.baseline:
        for m, v in ratios.items():
            print(f"{m}: baseline/kvscope median {statistics.median(v):.2f}x, range {min(v):.2f}-{max(v):.2f}x")


if __name__ == "__main__":
    main()
