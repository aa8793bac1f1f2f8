#!/usr/bin/env python3
"""What the KV tier's writes cost the replica that computes: the same requests on two single
servers of one model, one with --kv-tier (writing every full block and session to Redis) and one
without, alternating per round; reports the median of per-round ratios (with/without) of the
request time and of the decode rate, with their range.

usage: bench/scale_out_overhead.py --kvscope build/release/kvscope --model M.gguf [--rounds 7]
       [--prompt 1000] [--gen 128] [--threads 1] [--port 23800]
"""
import argparse, json, os, random, statistics, subprocess, time, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--kvscope", required=True)
ap.add_argument("--model", required=True)
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--prompt", type=int, default=1000)
ap.add_argument("--gen", type=int, default=128)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--port", type=int, default=23800)
a = ap.parse_args()
rport = a.port + 100
procs = [subprocess.Popen(["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                          stdout=subprocess.DEVNULL)]
common = ["serve", "-m", a.model, "--host", "127.0.0.1", "--threads", str(a.threads), "--signals", "off"]
procs.append(subprocess.Popen([a.kvscope, *common, "--port", str(a.port + 1), "--kv-tier", f"redis://127.0.0.1:{rport}"],
                              stderr=subprocess.DEVNULL))
procs.append(subprocess.Popen([a.kvscope, *common, "--port", str(a.port + 2)], stderr=subprocess.DEVNULL))


def up(port):
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health")
            return
        except Exception:
            time.sleep(0.1)
    raise SystemExit(f"server on {port} did not start")


def run(port, prompt):
    body = json.dumps({"prompt": prompt, "max_tokens": a.gen, "temperature": 0, "stream": True}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body, headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    first, n = None, 0
    with urllib.request.urlopen(req) as r:
        for line in r:
            line = line.decode().strip()
            if line.startswith("data: {") and json.loads(line[6:]).get("choices"):
                n += 1
                first = first or time.perf_counter()
    end = time.perf_counter()
    return end - t0, (n - 1) / (end - first) if n > 1 else 0.0


try:
    up(a.port + 1), up(a.port + 2)
    rng = random.Random(3)
    t_ratio, d_ratio = [], []
    for i in range(a.rounds):
        prompt = [rng.randint(3, 500) for _ in range(a.prompt)]
        order = [a.port + 1, a.port + 2] if i % 2 == 0 else [a.port + 2, a.port + 1]
        res = {p: run(p, prompt) for p in order}
        (tw, dw), (to, do) = res[a.port + 1], res[a.port + 2]
        t_ratio.append(tw / to)
        d_ratio.append(dw / do)
        print(f"round {i}: with tier {tw * 1e3:.0f} ms, {dw:.1f} tok/s; without {to * 1e3:.0f} ms, {do:.1f} tok/s")
    med = statistics.median
    print(f"request time with/without tier: median {med(t_ratio):.3f} (range {min(t_ratio):.3f}-{max(t_ratio):.3f}); "
          f"decode rate with/without: median {med(d_ratio):.3f} (range {min(d_ratio):.3f}-{max(d_ratio):.3f})")
    m = urllib.request.urlopen(f"http://127.0.0.1:{a.port + 1}/metrics").read().decode()
    print("tier:", " ".join(l for l in m.splitlines() if l.startswith(("kvscope_kv_tier_blocks_written_total", "kvscope_kv_tier_writes_dropped_total"))))
finally:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()
