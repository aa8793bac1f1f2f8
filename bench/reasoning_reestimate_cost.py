# Cost of the step-thread re-estimates of reasoning_effort auto: 40 tinygsm questions to the embedded
# model, one at a time, then kvscope_reestimate_seconds_total / kvscope_reestimates_done_total.
# usage: python3 bench/reasoning_reestimate_cost.py build/release/kvscope
import json, subprocess, sys, time, urllib.request
B = sys.argv[1]
items = [json.loads(l) for l in subprocess.check_output([B, "tinygsm", "--split", "test", "--n", "40", "--jsonl"]).decode().splitlines()]
qs = [it["question"] if "question" in it else it["prompt"]["slow"].split("Mode:")[0] for it in items]
p = subprocess.Popen([B, "serve", "-m", "models/kvscope-reasoner.gguf", "--port", "18741", "-t", "2"], stderr=subprocess.DEVNULL)
for _ in range(100):
    try: urllib.request.urlopen("http://127.0.0.1:18741/health"); break
    except Exception: time.sleep(0.1)
toks = 0; t0 = time.time()
for q in qs:
    body = json.dumps({"messages": [{"role": "user", "content": q}], "reasoning_effort": "auto", "temperature": 0, "max_tokens": 200}).encode()
    r = json.load(urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:18741/v1/chat/completions", body, {"Content-Type": "application/json"})))
    toks += r["usage"]["completion_tokens"]
wall = time.time() - t0
m = urllib.request.urlopen("http://127.0.0.1:18741/metrics").read().decode()
get = lambda k: float([l for l in m.splitlines() if l.startswith(k + " ")][0].split()[1])
n, s = get("kvscope_reestimates_done_total"), get("kvscope_reestimate_seconds_total")
print(f"{len(qs)} requests, {toks} completion tokens, {wall:.2f} s; {int(n)} re-estimates, {s*1e3:.2f} ms in all, {s/n*1e6:.1f} us each; {toks/wall:.1f} tok/s")
p.terminate(); p.wait()
