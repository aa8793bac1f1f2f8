#!/usr/bin/env python3
"""Time to first token of a long prompt recomputed on one replica vs fetched from the shared KV
tier on another (docs/scale-out.md). Starts its own cluster with deploy/local-cluster.sh.

Each round uses a fresh prompt of --tokens random token ids: replica 1 computes it (its prefix
cache and the tier lack it), then replica 2 gets the same prompt and brings the blocks in from the
tier. The rounds alternate the two by construction; the figure is the median of the per-round
ratios fetched/recomputed, with their range.

usage: bench/scale_out_ttft.py --kvscope build/release/kvscope --model M.gguf [--tokens 1500]
       [--rounds 7] [--threads 1] [--port 23600] [-- more serve arguments]
"""
import argparse, json, os, random, statistics, subprocess, sys, time, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--kvscope", required=True)
ap.add_argument("--model", required=True)
ap.add_argument("--tokens", type=int, default=1500)
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--port", type=int, default=23600)
ap.add_argument("--vocab", type=int, default=500, help="token ids drawn from 3..vocab")
ap.add_argument("extra", nargs="*")
a = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
script = os.path.join(root, "deploy", "local-cluster.sh")
d = f"/tmp/kvscope-ttft-{os.getpid()}"
subprocess.run([script, "start", "-n", "2", "--port", str(a.port), "--dir", d, "--model", a.model, "--kvscope", a.kvscope,
                "--", "--threads", str(a.threads), "--signals", "off", *a.extra], check=True)


def ttft(port, prompt):
    body = json.dumps({"prompt": prompt, "max_tokens": 4, "temperature": 0, "stream": True}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body, headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    first, text, ext = None, "", {}
    with urllib.request.urlopen(req) as r:
        for line in r:
            line = line.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            j = json.loads(line[6:])
            t = j["choices"][0].get("text", "") if j.get("choices") else ""
            if t and first is None:
                first = time.perf_counter() - t0
            text += t
            ext = j.get("kvscope", ext)
    return first, text, ext


def pending(port):
    m = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
    return float(next(l.split()[1] for l in m.splitlines() if l.startswith("kvscope_kv_tier_pending_writes ")))


try:
    rng = random.Random(1)
    ratios = []
    for i in range(a.rounds):
        prompt = [rng.randint(3, a.vocab) for _ in range(a.tokens)]
        t_re, text_a, ext_a = ttft(a.port + 1, prompt)
        while pending(a.port + 1) > 0:
            time.sleep(0.01)
        t_fe, text_b, ext_b = ttft(a.port + 2, prompt)
        assert text_a == text_b, "outputs differ"
        assert ext_b.get("prompt_tokens_tier", 0) > 0, ext_b
        ratios.append(t_fe / t_re)
        print(f"round {i}: recomputed {t_re * 1e3:.1f} ms (cached {ext_a.get('prompt_tokens_cached')}), "
              f"fetched {t_fe * 1e3:.1f} ms (tier {ext_b.get('prompt_tokens_tier')}), ratio {t_fe / t_re:.3f}")
    print(f"TTFT fetched/recomputed over {a.rounds} rounds: median {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f})")
finally:
    subprocess.run([script, "stop", "--dir", d], check=False)
