# Decode rate of 'reasoning: auto' requests with re-estimation (on the step thread, every 5 tokens) on vs off.
import json, subprocess, sys, time, threading, urllib.request
B, extra = sys.argv[1], sys.argv[2:]
items = [json.loads(l) for l in subprocess.check_output([B, "tinygsm", "--split", "test", "--n", "64", "--jsonl"]).decode().splitlines()]
qs = [it["prompt"]["slow"].split("Mode:")[0] for it in items]
def run(flags, port):
    p = subprocess.Popen([B, "serve", "--port", str(port), "-t", "2"] + flags, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try: urllib.request.urlopen(f"http://127.0.0.1:{port}/health"); break
        except Exception: time.sleep(0.1)
    toks = [0]; lock = threading.Lock()
    def one(q):
        body = json.dumps({"prompt": q, "reasoning": "auto", "temperature": 0, "max_tokens": 200}).encode()
        r = json.load(urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", body, {"Content-Type": "application/json"})))
        with lock: toks[0] += r["usage"]["completion_tokens"]
    # warm the decision cache so both runs decide the same way without the estimate prefill
    for q in qs[:2]: one(q)
    toks[0] = 0
    t0 = time.time(); th = [threading.Thread(target=one, args=(q,)) for q in qs]
    [t.start() for t in th]; [t.join() for t in th]
    wall = time.time() - t0
    p.terminate(); p.wait()
    return toks[0], wall
res = {}
for rep in range(3):
    for name, flags in [("off", ["--analysis-interval", "0"]), ("on", ["--analysis-interval", "50", "--no-early-answer", "--no-upgrade"])]:
        t, w = run(flags + extra, 18200 + rep * 2 + (name == "on"))
        res.setdefault(name, []).append(t / w)
        print(name, t, "tokens", "%.2f s" % w, "%.1f tok/s" % (t / w), flush=True)
import statistics
for k, v in res.items(): print(k, "median %.1f tok/s" % statistics.median(v))
