#!/usr/bin/env python3
"""Continuous batching, KV waste and session reuse on the ~120M model, with llama.cpp alongside.

1. Aggregate generation tokens/s at each concurrency (distinct random prompts, fixed lengths):
   `kvscope bench-serve` and the same workload through llama.cpp with one context of N parallel
   sequences (bench/llamacpp_parallel.mjs, node-llama-cpp 3.21.1).
2. KV memory waste (allocated minus used token slots over allocated) under mixed lengths.
3. Time to first token of a session's turn 2 with a long history, against recomputing it.
Prints markdown tables; medians of --reps repetitions for kvscope.

usage: bench/serve_bench.py [--kvscope build/release/kvscope] [--threads 2] [--reps 3] [--type f32|q8_0]
"""
import argparse, json, os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))


def run(cmd, stdin=None):
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, capture_output=True, text=True, input=stdin).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvscope", default=os.path.join(here, "../build/release/kvscope"))
    ap.add_argument("--type", default="f32", help="weight type of the generated model (f32, q8_0, ...)")
    ap.add_argument("--model", default=None, help="default: /tmp/kvscope-bench/llama-125m-TYPE.gguf, written if missing")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--concurrency", default="1,4,16,64")
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--gen-len", type=int, default=64)
    ap.add_argument("--history", type=int, default=1500)
    ap.add_argument("--no-llamacpp", action="store_true")
    args = ap.parse_args()
    if args.model is None:
        args.model = f"/tmp/kvscope-bench/llama-125m-{args.type}.gguf"
    if not os.path.exists(args.model):
        os.makedirs(os.path.dirname(args.model), exist_ok=True)
        run([args.kvscope, "gen-model", "--arch", "llama", "--dim", "768", "--layers", "12", "--heads", "12",
             "--kv-heads", "4", "--ffn", "2048", "--vocab", "32000", "--ctx", "2048", "--type", args.type, "--seed", "1",
             "-o", args.model])
    t = ["-t", str(args.threads)]
    ours = json.loads(run([args.kvscope, "bench-serve", "-m", args.model, "--concurrency", args.concurrency,
                           "--prompt-len", str(args.prompt_len), "--gen-len", str(args.gen_len),
                           "--reps", str(args.reps), "--json"] + t))["results"]
    ref = {}
    if not args.no_llamacpp:
        req = {"model": args.model, "n_vocab": 32000, "concurrency": [int(c) for c in args.concurrency.split(",")],
               "prompt_len": args.prompt_len, "gen_len": args.gen_len, "threads": args.threads}
        env_oracle = os.environ.get("KVSCOPE_ORACLE_DIR", os.path.join(here, "../build/oracle"))
        out = subprocess.run(["node", os.path.join(here, "llamacpp_parallel.mjs")], input=json.dumps(req), text=True,
                             capture_output=True, env=dict(os.environ, KVSCOPE_ORACLE_DIR=env_oracle))
        if out.returncode == 0:
            for line in out.stdout.splitlines():
                r = json.loads(line)
                ref[r["concurrency"]] = r
        else:
            print("llama.cpp run failed:\n" + out.stderr[-2000:], file=sys.stderr)
    mixed = json.loads(run([args.kvscope, "bench-serve", "-m", args.model, "--concurrency", "16", "--prompt-len", "32",
                            "--prompt-len-max", "512", "--gen-len", "16", "--gen-len-max", "128", "--json"] + t))["results"][0]
    sess = json.loads(run([args.kvscope, "bench-serve", "-m", args.model, "--session-history", str(args.history),
                           "--reps", str(args.reps), "--json"] + t))

    base = ours[0]["gen_tok_s"]
    print(f"\n| concurrency | kvscope gen tok/s | x single stream | decode-phase tok/s | mean TTFT ms | llama.cpp gen tok/s | kvscope / llama.cpp |")
    print("|---|---|---|---|---|---|---|")
    for r in ours:
        c = r["concurrency"]
        lr = ref.get(c)
        print(f"| {c} | {r['gen_tok_s']:.1f} | {r['gen_tok_s'] / base:.2f}x | {r['decode_tok_s']:.1f} | {r['ttft_ms_mean']:.0f} | "
              + (f"{lr['gen_tok_s']:.1f} | {r['gen_tok_s'] / lr['gen_tok_s']:.2f}x |" if lr else "- | - |"))
    print(f"\nKV waste, 16 concurrent requests, prompt 32-512 and generation 16-128 tokens: "
          f"{100 * mixed['kv_waste']:.2f}% (block size 16, {mixed['preemptions']} preemptions)")
    print(f"Session turn 2 after {sess['history_tokens']} history tokens ({sess['turn2_prompt_tokens']} prompt tokens, "
          f"{sess['turn2_cached_tokens']} reused): TTFT {sess['ttft_session_ms']:.1f} ms vs {sess['ttft_recompute_ms']:.1f} ms "
          f"recomputed = {100 * sess['ratio']:.1f}%")
    print(json.dumps({"kvscope": ours, "llama_cpp": list(ref.values()), "mixed": mixed, "session": sess}), file=sys.stderr)


if __name__ == "__main__":
    main()
