#!/usr/bin/env python3
"""Soak test: `kvscope serve` on 127.0.0.1 under a steady mixed load, watching its memory.

N client threads (--concurrency, default 8) loop for --minutes (default 30) over a mix of
requests: streamed completions read to the end, streamed chat completions hung up after a few
events (client cancel), non-streamed completions, non-streamed ones hung up before the answer,
and small embeddings. The server's RSS (from /proc/PID/status) is sampled every --sample-s
seconds (default 60); the report gives every sample, the least-squares slope in MB per hour over
all samples and over the second half (after warm-up), request counts by kind and outcome, and the
server's own counters. Not part of CI: a run takes the whole duration.

usage: bench/soak.py [--kvscope build/release/kvscope] [--model M] [--minutes 30] [--concurrency 8]
                     [--threads 2] [--json out.json]
"""
import argparse, http.client, json, os, random, signal, socket, subprocess, sys, threading, time

here = os.path.dirname(os.path.abspath(__file__))

WORDS = ("the cat sat on a mat while three dogs ran far away over green hills and the river "
         "carried small boats past old houses where people told long stories about harbours").split()


def prompt(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def slope_mb_per_h(samples):
    """Least-squares slope of (t seconds, rss MB) in MB per hour; None below 2 samples."""
    if len(samples) < 2:
        return None
    n = len(samples)
    mt = sum(t for t, _ in samples) / n
    mr = sum(r for _, r in samples) / n
    den = sum((t - mt) ** 2 for t, _ in samples)
    return None if den == 0 else 3600.0 * sum((t - mt) * (r - mr) for t, r in samples) / den


class Client:
    def __init__(self, port, stats, lock):
        self.port, self.stats, self.lock = port, stats, lock

    def count(self, kind, outcome):
        with self.lock:
            self.stats.setdefault(kind, {}).setdefault(outcome, 0)
            self.stats[kind][outcome] += 1

    def post(self, path, body, read=True, timeout=120):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        return c, r

    def stream_full(self, rng):
        c, r = self.post("/v1/completions", {"prompt": prompt(rng, rng.randint(8, 64)), "max_tokens": rng.randint(8, 64),
                                             "temperature": 0.8, "stream": True})
        data = r.read()
        c.close()
        ok = r.status == 200 and b"[DONE]" in data
        self.count("stream", "ok" if ok else f"http_{r.status}")

    def stream_cancel(self, rng):
        c, r = self.post("/v1/chat/completions", {"messages": [{"role": "user", "content": prompt(rng, rng.randint(8, 64))}],
                                                  "max_tokens": 200, "stream": True})
        if r.status != 200:
            self.count("stream_cancel", f"http_{r.status}")
            c.close()
            return
        for _ in range(rng.randint(1, 4)):
            if not r.fp.readline():
                break
        c.sock.shutdown(socket.SHUT_RDWR)  # hang up mid-stream
        c.close()
        self.count("stream_cancel", "hung_up")

    def body(self, rng):
        c, r = self.post("/v1/completions", {"prompt": prompt(rng, rng.randint(8, 64)), "max_tokens": rng.randint(4, 32)})
        data = r.read()
        c.close()
        ok = r.status == 200 and json.loads(data)["choices"][0]["finish_reason"] in ("stop", "length")
        self.count("body", "ok" if ok else f"http_{r.status}")

    def body_cancel(self, rng):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("POST", "/v1/completions", json.dumps({"prompt": prompt(rng, 32), "max_tokens": 200}),
                  {"Content-Type": "application/json"})
        time.sleep(rng.uniform(0.05, 0.5))
        c.sock.shutdown(socket.SHUT_RDWR)
        c.close()
        self.count("body_cancel", "hung_up")

    def embed(self, rng):
        c, r = self.post("/v1/embeddings", {"input": [prompt(rng, rng.randint(4, 32)) for _ in range(rng.randint(1, 8))]})
        data = r.read()
        c.close()
        ok = r.status == 200 and len(json.loads(data)["data"]) > 0
        self.count("embed", "ok" if ok else f"http_{r.status}")

    def loop(self, seed, deadline):
        rng = random.Random(seed)
        kinds = [(self.stream_full, 4), (self.stream_cancel, 2), (self.body, 2), (self.body_cancel, 1), (self.embed, 1)]
        pool = [k for k, w in kinds for _ in range(w)]
        while time.time() < deadline:
            f = rng.choice(pool)
            try:
                f(rng)
            except Exception as e:  # a failed request is counted, never fatal
                self.count(f.__name__, "error:" + type(e).__name__)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvscope", default=os.path.join(here, "../build/release/kvscope"))
    ap.add_argument("--model", default=None, help="default: serve's own default (the embedded reasoner)")
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sample-s", type=float, default=60)
    ap.add_argument("--port", type=int, default=0, help="0: a free port")
    ap.add_argument("--json", default=None, help="also write the report as JSON here")
    args = ap.parse_args()
    port = args.port
    if port == 0:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
    cmd = [args.kvscope, "serve"] + (["-m", args.model] if args.model else []) + [
        "--host", "127.0.0.1", "--port", str(port), "-t", str(args.threads), "--shutdown-grace", "5"]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    srv = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/health")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            if srv.poll() is not None:
                sys.exit("server exited: " + srv.stderr.read()[-2000:])
            time.sleep(0.2)
        stats, lock = {}, threading.Lock()
        t0 = time.time()
        deadline = t0 + 60 * args.minutes
        threads = [threading.Thread(target=Client(port, stats, lock).loop, args=(i, deadline), daemon=True)
                   for i in range(args.concurrency)]
        for t in threads:
            t.start()
        samples = [(0.0, rss_mb(srv.pid))]
        print(f"t=0s rss={samples[0][1]:.1f} MB", file=sys.stderr, flush=True)
        while time.time() < deadline:
            time.sleep(min(args.sample_s, max(0.0, deadline - time.time())))
            if srv.poll() is not None:
                sys.exit("server died during the soak: " + srv.stderr.read()[-2000:])
            samples.append((time.time() - t0, rss_mb(srv.pid)))
            with lock:
                done = sum(sum(v.values()) for v in stats.values())
            print(f"t={samples[-1][0]:.0f}s rss={samples[-1][1]:.1f} MB requests={done}", file=sys.stderr, flush=True)
        for t in threads:
            t.join(timeout=180)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/v1/stats")
        server_stats = json.loads(c.getresponse().read())
        half = [s for s in samples if s[0] >= samples[-1][0] / 2]
        report = {"model": args.model or "default", "minutes": args.minutes, "concurrency": args.concurrency, "threads": args.threads,
                  "rss_samples_mb": [[round(t), round(r, 1)] for t, r in samples],
                  "slope_mb_per_h": slope_mb_per_h(samples), "slope_second_half_mb_per_h": slope_mb_per_h(half),
                  "requests": stats,
                  "server": {"requests": server_stats.get("requests"), "tokens": server_stats.get("tokens"),
                             "kv": server_stats.get("kv")}}
    finally:
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(timeout=60)
        except subprocess.TimeoutExpired:
            srv.kill()
    print("| t (s) | RSS (MB) |\n|---|---|")
    for t, r in report["rss_samples_mb"]:
        print(f"| {t} | {r} |")
    fmt = lambda v: "n/a" if v is None else f"{v:+.2f}"
    print(f"\nRSS slope: {fmt(report['slope_mb_per_h'])} MB/h over the run, "
          f"{fmt(report['slope_second_half_mb_per_h'])} MB/h over the second half")
    print("\n| kind | outcomes |\n|---|---|")
    for k, v in sorted(stats.items()):
        print(f"| {k} | " + ", ".join(f"{o}: {n}" for o, n in sorted(v.items())) + " |")
    print("\nserver: " + json.dumps(report["server"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
