#!/usr/bin/env python3
"""kvscope vs llama.cpp on the same GGUF files, same threads, in one run.

Writes ~120M-parameter random-weight Llama models (F32 and Q8_0) with `kvscope gen-model`, runs
`kvscope bench` and llama.cpp's `llama-bench` (built by bench/build_llama_bench.sh) on each, and
prints prompt-processing (pp) and generation (tg) tokens/s, the ratios, and generation as a fraction
of the measured memory-bandwidth limit. The two engines alternate for --rounds rounds of --reps
repetitions each, so that drift in a shared machine's speed hits both alike; each round gives a
ratio, and the table shows median rates, the median per-round ratio and the range of ratios.

usage: bench/compare_llamacpp.py --kvscope build/release/kvscope [--threads 2] [--reps 3] [--rounds 5] [--types f32,q8_0]
       bench/compare_llamacpp.py --models a.gguf,b.gguf ...   (existing files instead of the generated Llamas)
"""
import argparse, json, os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))

def run(cmd):
    print("+", " ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

def llama_bench(binary, model, pp, tg, threads, reps):
    out = json.loads(run([binary, "-m", model, "-p", str(pp), "-n", str(tg), "-t", str(threads), "-r", str(reps), "-o", "json"]))
    res = {}
    for e in out:
        key = "pp" if e.get("n_prompt", 0) > 0 else "tg"
        samples = sorted(e.get("samples_ts") or [e["avg_ts"]])
        n = len(samples)
        res[key] = samples[n // 2] if n % 2 else 0.5 * (samples[n // 2 - 1] + samples[n // 2])
    return res

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvscope", default=os.path.join(here, "../build/release/kvscope"))
    ap.add_argument("--llama-bench", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pp", type=int, default=256)
    ap.add_argument("--tg", type=int, default=64)
    ap.add_argument("--types", default="f32,q8_0")
    ap.add_argument("--workdir", default="/tmp/kvscope-bench")
    ap.add_argument("--models", default="", help="comma-separated GGUF files to compare instead of the generated ones")
    args = ap.parse_args()
    lb = args.llama_bench or run(["bash", os.path.join(here, "build_llama_bench.sh")]).strip().splitlines()[-1]
    os.makedirs(args.workdir, exist_ok=True)
    rows = []
    for t in (args.models or args.types).split(","):
        model = t if args.models else os.path.join(args.workdir, f"llama-125m-{t}.gguf")
        if args.models:
            t = os.path.basename(t)
        elif not os.path.exists(model):
            run([args.kvscope, "gen-model", "--arch", "llama", "--dim", "768", "--layers", "12", "--heads", "12",
                 "--kv-heads", "4", "--ffn", "2048", "--vocab", "32000", "--ctx", "2048", "--type", t, "--seed", "1",
                 "-o", model])
        runs = []
        for _ in range(args.rounds):
            ours = json.loads(run([args.kvscope, "bench", "-m", model, "-p", str(args.pp), "-n", str(args.tg),
                                   "-t", str(args.threads), "-r", str(args.reps), "--json", "--membw"]))
            ref = llama_bench(lb, model, args.pp, args.tg, args.threads, args.reps)
            runs.append((ours, ref))
        rows.append((t, runs))
    med = lambda v: sorted(v)[len(v) // 2] if len(v) % 2 else 0.5 * (sorted(v)[len(v) // 2 - 1] + sorted(v)[len(v) // 2])
    print(f"\n{args.rounds} alternating rounds of {args.reps} repetitions; rates are medians over rounds, ratios the median "
          f"per-round ratio [min-max]")
    label = "model" if args.models else "model (125M llama)"
    print(f"\n| {label} | threads | kvscope pp{args.pp} | llama.cpp pp{args.pp} | ratio | kvscope tg{args.tg} | "
          f"llama.cpp tg{args.tg} | ratio | tg % of bandwidth limit |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t, runs in rows:
        o_pp = med([o["pp_tok_s"] for o, _ in runs]); r_pp = med([r["pp"] for _, r in runs])
        o_tg = med([o["tg_tok_s"] for o, _ in runs]); r_tg = med([r["tg"] for _, r in runs])
        pp_r = [o["pp_tok_s"] / r["pp"] for o, r in runs]; tg_r = [o["tg_tok_s"] / r["tg"] for o, r in runs]
        bw = med([o["mem_read_gb_s"] for o, _ in runs]); gb = runs[0][0]["weight_gb_per_token"]
        print(f"| {t} | {args.threads} | {o_pp:.1f} | {r_pp:.1f} | {med(pp_r):.2f}x [{min(pp_r):.2f}-{max(pp_r):.2f}] | "
              f"{o_tg:.1f} | {r_tg:.1f} | {med(tg_r):.2f}x [{min(tg_r):.2f}-{max(tg_r):.2f}] | "
              f"{100 * o_tg * gb / bw:.0f}% ({gb * 1000:.0f} MB/token, {bw:.1f} GB/s) |")
    print(json.dumps([{"type": t, "rounds": [{"kvscope": o, "llama_cpp": r} for o, r in runs]} for t, runs in rows]),
          file=sys.stderr)

if __name__ == "__main__":
    main()
