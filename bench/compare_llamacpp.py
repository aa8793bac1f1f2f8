#!/usr/bin/env python3
"""kvscope vs llama.cpp on the same GGUF files, same threads, in one run.

Writes ~120M-parameter random-weight Llama models (F32 and Q8_0) with `kvscope gen-model`, runs
`kvscope bench` and llama.cpp's `llama-bench` (built by bench/build_llama_bench.sh) on each, and
prints prompt-processing (pp) and generation (tg) tokens/s, the ratios, and generation as a fraction
of the measured memory-bandwidth limit. The two engines alternate for --rounds rounds of --reps
repetitions each, so that drift in a shared machine's speed hits both alike; each round gives a
ratio, and the table shows median rates, the median per-round ratio and the range of ratios.

usage: bench/compare_llamacpp.py --kvscope build/release/kvscope [--threads 2] [--reps 3] [--rounds 5] [--types f32,q8_0]

--quantize: the files users download. Writes an F16 gen-model file per --shapes entry (125m: the
llama 125M shape; 1b: dim 2048, 16 layers, 32 heads, 8 KV heads, ffn 8192), makes --qtypes files
from it with llama.cpp's own llama-quantize (from --llama-bin-dir, else built beside llama-bench by
bench/build_llama_bench.sh), benchmarks them as above, and runs the parity test (kvscope_tests,
--tests) on every file: same greedy tokens as llama.cpp for 64 steps, top-20 log-probabilities
within tolerance.

usage: bench/compare_llamacpp.py --quantize [--shapes 125m,1b] [--qtypes Q4_K_M,Q5_K_M,Q6_K,Q3_K_M,IQ4_XS,Q8_0]
                                 [--llama-bin-dir /work/scratch/llama.cpp/build/bin] [--no-parity]
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

SHAPES = {
    "125m": ["--dim", "768", "--layers", "12", "--heads", "12", "--kv-heads", "4", "--ffn", "2048"],
    "1b": ["--dim", "2048", "--layers", "16", "--heads", "32", "--kv-heads", "8", "--ffn", "8192"],
}

def gen_model(kvscope, path, shape, t):
    if not os.path.exists(path):
        run([kvscope, "gen-model", "--arch", "llama", *SHAPES[shape], "--vocab", "32000", "--ctx", "2048",
             "--type", t, "--seed", "1", "-o", path])
    return path

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
    ap.add_argument("--quantize", action="store_true", help="benchmark llama-quantize's files (see above)")
    ap.add_argument("--shapes", default="125m,1b")
    ap.add_argument("--qtypes", default="Q4_K_M,Q5_K_M,Q6_K,Q3_K_M,IQ4_XS,Q8_0")
    ap.add_argument("--llama-bin-dir", default="/work/scratch/llama.cpp/build/bin")
    ap.add_argument("--tests", default=os.path.join(here, "../build/release/kvscope_tests"))
    ap.add_argument("--no-parity", action="store_true")
    ap.add_argument("--models", default="", help="comma-separated GGUF files to compare instead of the generated ones")
    args = ap.parse_args()
    bindir = args.llama_bin_dir
    if args.llama_bench:
        lb = args.llama_bench
    elif bindir and os.access(os.path.join(bindir, "llama-bench"), os.X_OK) and \
            os.access(os.path.join(bindir, "llama-quantize"), os.X_OK):
        lb = os.path.join(bindir, "llama-bench")
    else:
        lb = run(["bash", os.path.join(here, "build_llama_bench.sh")]).strip().splitlines()[-1]
    quantize_bin = os.path.join(os.path.dirname(lb), "llama-quantize")
    os.makedirs(args.workdir, exist_ok=True)
    models = []  # (label, path)
    if args.quantize:
        for shape in args.shapes.split(","):
            f16 = gen_model(args.kvscope, os.path.join(args.workdir, f"llama-{shape}-f16.gguf"), shape, "f16")
            for q in args.qtypes.split(","):
                out = os.path.join(args.workdir, f"llama-{shape}-{q}.gguf")
                if not os.path.exists(out):
                    run([quantize_bin, f16, out, q, str(args.threads)])
                models.append((f"{shape} {q}", out))
    elif args.models:
        models = [(os.path.basename(m), m) for m in args.models.split(",")]
    else:
        for t in args.types.split(","):
            models.append((t, gen_model(args.kvscope, os.path.join(args.workdir, f"llama-125m-{t}.gguf"), "125m", t)))
    rows = []
    failed = []  # (label, first error line): files kvscope refuses are reported, not benchmarked
    for t, model in models:
        r = subprocess.run([args.kvscope, "bench", "-m", model, "-p", "8", "-n", "2", "-t", "1", "-r", "1"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failed.append((t, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]))
            continue
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
    label = "model (llama-quantize)" if args.quantize else "model" if args.models else "model (125M llama)"
    print(f"\n| {label} | threads | kvscope pp{args.pp} | llama.cpp pp{args.pp} | ratio | kvscope tg{args.tg} | "
          f"llama.cpp tg{args.tg} | ratio | tg % of bandwidth limit | kvscope RSS (file + KV) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for t, runs in rows:
        o_pp = med([o["pp_tok_s"] for o, _ in runs]); r_pp = med([r["pp"] for _, r in runs])
        o_tg = med([o["tg_tok_s"] for o, _ in runs]); r_tg = med([r["tg"] for _, r in runs])
        pp_r = [o["pp_tok_s"] / r["pp"] for o, r in runs]; tg_r = [o["tg_tok_s"] / r["tg"] for o, r in runs]
        bw = med([o["mem_read_gb_s"] for o, _ in runs]); gb = runs[0][0]["weight_gb_per_token"]
        print(f"| {t} | {args.threads} | {o_pp:.1f} | {r_pp:.1f} | {med(pp_r):.2f}x [{min(pp_r):.2f}-{max(pp_r):.2f}] | "
              f"{o_tg:.1f} | {r_tg:.1f} | {med(tg_r):.2f}x [{min(tg_r):.2f}-{max(tg_r):.2f}] | "
              f"{100 * o_tg * gb / bw:.0f}% ({gb * 1000:.0f} MB/token, {bw:.1f} GB/s) | "
              f"{max(o.get('peak_rss_mb', 0) for o, _ in runs):.0f} MB ({runs[0][0].get('file_mb', 0):.0f} + "
              f"{runs[0][0].get('kv_mb', 0):.0f} MB) |")
    for t, err in failed:
        print(f"| {t} | {args.threads} | not loaded: {err} |")
    print(json.dumps([{"type": t, "rounds": [{"kvscope": o, "llama_cpp": r} for o, r in runs]} for t, runs in rows]),
          file=sys.stderr)
    if args.quantize and not args.no_parity:
        ok = [(t, p) for t, p in models if t not in {f for f, _ in failed}]
        for i, (t, p) in enumerate(ok):
            print(f"file_{i}: {t} ({p})")
        env = dict(os.environ, KVSCOPE_PARITY_FILES=",".join(p for _, p in ok))
        cmd = [args.tests, "--gtest_filter=Models/Parity.*/file_*"]
        print("+ KVSCOPE_PARITY_FILES=... " + " ".join(cmd), file=sys.stderr)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        print("\nparity with llama.cpp:")
        for line in r.stdout.splitlines():
            if line.startswith("[parity]") or "FAILED" in line or "differs" in line:
                print(line)
        if r.returncode != 0:
            sys.exit("parity check failed")

if __name__ == "__main__":
    main()
