#!/usr/bin/python3
"""Platt-scale a confidence probe (models/*.confidence.bin) on feature rows of other questions.

The probe (signals/confidence_probe.h) outputs P(correct) = sigmoid(logit). A probe fitted on
questions the model answers right more often than users' questions is overconfident on the
latter. This fits P = sigmoid(a * logit + b) on the finished answers of a calibration set (feature
rows written by `kvscope train-confidence --data Q.jsonl --features-out F.jsonl -o /dev/null`,
questions that resemble what users type and that the probe was not fitted on) and folds a and b
into the probe's last layer (w3 <- a * w3, b3 <- a * b3 + b), so the file keeps its format and
every reader (serve, run --json, eval --early-cut) gets the calibrated score. The early-cut
threshold is mapped through the same function, so cut decisions do not change. AUROC does not
change either (a > 0 is monotone); only the probabilities do.

  calibrate_probe.py --probe M.confidence.bin --features cal.jsonl -o M.confidence.bin \\
      [--test-features test.jsonl] [--modes slow,mixed]

Reports, per mode, ECE (10 equal-width bins, as signals::expected_calibration_error) and AUROC of
the probe before and after, on the calibration rows and on --test-features rows.
"""
import argparse
import json
import math
import struct
import sys

MAGIC = b"KVSPROB1"
LOGIT_FEATURES, NUMBER_FEATURES, PRIOR_FEATURES = 8, 14, 3


class Reader:
    def __init__(self, b):
        self.b, self.o = b, 0

    def get(self, fmt):
        v = struct.unpack_from("<" + fmt, self.b, self.o)
        self.o += struct.calcsize("<" + fmt)
        return v[0]

    def str(self):
        n = self.get("I")
        s = self.b[self.o:self.o + n]
        self.o += n
        return s

    def floats(self):
        n = self.get("Q")
        v = list(struct.unpack_from(f"<{n}f", self.b, self.o))
        self.o += 4 * n
        return v


def read_probe(path):
    """The probe file's fields, with the byte offsets needed to rewrite it."""
    b = open(path, "rb").read()
    if b[:8] != MAGIC:
        sys.exit(f"{path}: not a kvscope confidence file")
    r = Reader(b)
    r.o = 8
    p = {"version": r.get("I"), "fingerprint": r.get("Q")}
    p["layers"] = [r.get("i") for _ in range(r.get("I"))]
    p["kv"] = r.get("B") != 0
    flags = r.get("B")
    p["logits"], p["prompt"], p["last"], p["numbers"], p["prior"] = (bool(flags & m) for m in (1, 2, 4, 8, 16))
    p["cut_off"] = r.o
    p["cut_below"] = r.get("d")
    p["info_off"] = r.o
    p["info"] = r.str()
    p["after_info"] = r.o
    if p["prior"]:
        [r.get("i") for _ in range(r.get("I"))]
        r.get("d")
        r.str()
        r.get("i"), r.get("i")
        r.floats()
    p["mlp_off"] = r.o
    p["in"], p["hid"] = r.get("i"), r.get("i")
    p["flat_off"] = r.o + 8
    p["flat"] = r.floats()
    if r.o != len(b):
        sys.exit(f"{path}: trailing bytes")
    p["bytes"] = b
    return p


def write_probe(path, p, flat, cut_below, info):
    b = p["bytes"]
    out = bytearray(b[:p["cut_off"]])
    out += struct.pack("<d", cut_below)
    out += struct.pack("<I", len(info)) + info
    out += b[p["after_info"]:p["flat_off"]]
    out += struct.pack(f"<{len(flat)}f", *flat)
    open(path, "wb").write(bytes(out))


def probe_inputs(x, p, head_dim, prior):
    """training::probe_inputs: the probe's features out of a row collected with every part."""
    e = 2 * head_dim
    per, resp = 3 * e + 4, e + 4
    base = LOGIT_FEATURES + 1
    has_numbers = (len(x) - base) % per != 0 and (len(x) - base - NUMBER_FEATURES) % per == 0
    nnum = NUMBER_FEATURES if has_numbers else 0
    if p["numbers"] and not has_numbers:
        sys.exit("the feature rows hold no number statistics")
    out = []
    if p["kv"]:
        for l in p["layers"]:
            b = l * per
            out += x[b:b + resp]
            if p["prompt"]:
                out += x[b + resp:b + resp + e]
            if p["last"]:
                out += x[b + resp + e:b + resp + 2 * e]
    tail = len(x) - (base + nnum)
    if p["logits"]:
        out += x[tail:tail + LOGIT_FEATURES]
    if p["numbers"]:
        out += x[tail + LOGIT_FEATURES:len(x) - 1]
    if p["prior"]:
        if not prior or len(prior) != PRIOR_FEATURES:
            sys.exit("the feature rows hold no prompt prior")
        out += prior
    out.append(x[-1])
    return out


def mlp_logit(flat, n_in, hid, x):
    """ProbeMLP::logit."""
    mean, inv = flat[:n_in], flat[n_in:2 * n_in]
    o = 2 * n_in
    w1 = flat[o:o + hid * n_in]; o += hid * n_in
    b1 = flat[o:o + hid]; o += hid
    w2 = flat[o:o + hid * hid]; o += hid * hid
    b2 = flat[o:o + hid]; o += hid
    w3 = flat[o:o + hid]; o += hid
    b3 = flat[o]
    xs = [(x[i] - mean[i]) * inv[i] for i in range(n_in)]
    h1 = [max(0.0, b1[j] + sum(w1[j * n_in + i] * xs[i] for i in range(n_in))) for j in range(hid)]
    h2 = [max(0.0, b2[j] + sum(w2[j * hid + i] * h1[i] for i in range(hid))) for j in range(hid)]
    return b3 + sum(w3[j] * h2[j] for j in range(hid))


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def ece(scores, ok):
    """signals::expected_calibration_error: 10 equal-width bins."""
    if not scores:
        return 0.0
    n, conf, acc = [0] * 10, [0.0] * 10, [0.0] * 10
    for s, k in zip(scores, ok):
        b = min(9, max(0, int(s * 10)))
        n[b] += 1
        conf[b] += s
        acc[b] += k
    return sum(n[b] / len(scores) * abs(acc[b] / n[b] - conf[b] / n[b]) for b in range(10) if n[b])


def auroc(scores, ok):
    pos = [s for s, k in zip(scores, ok) if k]
    neg = [s for s, k in zip(scores, ok) if not k]
    if not pos or not neg:
        return float("nan")
    ranked = sorted((s, k) for s, k in zip(scores, ok))
    # rank-sum with ties counted half
    total, i = 0.0, 0
    rank = 1
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        avg = (rank + rank + (j - i) - 1) / 2
        total += avg * sum(1 for t in range(i, j) if ranked[t][1])
        rank += j - i
        i = j
    return (total - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def log_loss(z, ok, a, b):
    total = 0.0
    for zi, y in zip(z, ok):
        t = a * zi + b  # -log sigmoid(t) for a right answer, -log(1 - sigmoid(t)) for a wrong one
        u = -t if y else t
        total += u + math.log1p(math.exp(-u)) if u > 0 else math.log1p(math.exp(u))
    return total


def fit_platt(z, ok, iters=100):
    """a, b minimizing the log loss of sigmoid(a * z + b): Newton's method with a tiny ridge, each
    step halved until the loss does not rise (a full Newton step from a = 1 can overshoot to huge
    slopes on a few hundred answers)."""
    a, b = 1.0, 0.0
    loss = log_loss(z, ok, a, b)
    for _ in range(iters):
        ga = gb = haa = hab = hbb = 0.0
        for zi, y in zip(z, ok):
            q = sigmoid(a * zi + b)
            d = q - y
            w = q * (1 - q)
            ga += d * zi
            gb += d
            haa += w * zi * zi
            hab += w * zi
            hbb += w
        haa += 1e-6
        hbb += 1e-6
        det = haa * hbb - hab * hab
        da = (hbb * ga - hab * gb) / det
        db = (haa * gb - hab * ga) / det
        step = 1.0
        while step > 1e-9:
            na, nb = a - step * da, b - step * db
            nl = log_loss(z, ok, na, nb)
            if nl <= loss:
                break
            step /= 2
        else:
            break  # no descent left: converged
        a, b, loss = na, nb, nl
        if abs(step * da) < 1e-10 and abs(step * db) < 1e-10:
            break
    return a, b


def final_logits(path, p, head_dim, modes):
    """(mode, logit, ok) of every finished answer in a feature file."""
    out = []
    for line in open(path):
        j = json.loads(line)
        if j["share"] != 1 or (j["mode"] and j["mode"] not in modes):
            continue
        x = probe_inputs(j["x"], p, head_dim, j.get("prior"))
        out.append((j["mode"], mlp_logit(p["flat"], p["in"], p["hid"], x), int(j["ok"])))
    return out


def report(name, rows, a, b, modes):
    res = {}
    for m in modes:
        z = [r[1] for r in rows if r[0] == m]
        ok = [r[2] for r in rows if r[0] == m]
        if not z:
            continue
        before = [sigmoid(v) for v in z]
        after = [sigmoid(a * v + b) for v in z]
        res[m] = {"n": len(z), "accuracy": sum(ok) / len(ok), "mean_p_before": sum(before) / len(z),
                  "mean_p_after": sum(after) / len(z), "ece_before": ece(before, ok), "ece_after": ece(after, ok),
                  "auroc": auroc(before, ok), "auroc_after": auroc(after, ok)}
        r = res[m]
        print(f"{name} {m:6s} n={r['n']} acc {r['accuracy']:.3f}  mean P {r['mean_p_before']:.3f} -> "
              f"{r['mean_p_after']:.3f}  ECE {r['ece_before']:.3f} -> {r['ece_after']:.3f}  "
              f"AUROC {r['auroc']:.3f} -> {r['auroc_after']:.3f}", file=sys.stderr)
    return res


def fold(p, a, b):
    """The probe's weights with sigmoid(a * logit + b) folded into its last layer."""
    flat = list(p["flat"])
    n, hid = len(flat), p["hid"]
    for j in range(n - 1 - hid, n - 1):
        flat[j] *= a
    flat[n - 1] = a * flat[n - 1] + b
    return flat


def self_test(path):
    """The fold computes a * logit + b, the file reads back, and the fit recovers a known a, b."""
    import os
    import random
    import tempfile
    p = read_probe(path)
    rng = random.Random(1)
    a, b = 0.7, -0.4
    flat = fold(p, a, b)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cal.bin")
        write_probe(out, p, flat, p["cut_below"], p["info"])
        q = read_probe(out)
        assert q["bytes"] == p["bytes"][:p["flat_off"]] + q["bytes"][p["flat_off"]:], "header changed"
        for _ in range(20):
            x = [rng.gauss(0, 1) for _ in range(p["in"])]
            z0 = mlp_logit(p["flat"], p["in"], p["hid"], x)
            z1 = mlp_logit(q["flat"], q["in"], q["hid"], x)
            assert abs(z1 - (a * z0 + b)) < 1e-3 * (1 + abs(z0)), (z0, z1)
    z = [rng.gauss(0, 2) for _ in range(4000)]
    ok = [int(rng.random() < sigmoid(0.5 * v + 0.3)) for v in z]
    fa, fb = fit_platt(z, ok)
    assert abs(fa - 0.5) < 0.1 and abs(fb - 0.3) < 0.15, (fa, fb)
    # a very overconfident probe (logits of 3 +- 6, right 60% of the time): undamped Newton from
    # a = 1 overshot to slopes of 1e9 on such a set (stage 8's 800 user-style answers)
    z = [rng.gauss(3, 6) for _ in range(800)]
    ok = [int(rng.random() < sigmoid(0.15 * v - 0.2)) for v in z]
    oa, ob = fit_platt(z, ok)
    assert abs(oa - 0.15) < 0.05 and abs(ob + 0.2) < 0.3, (oa, ob)
    assert abs(ece([0.95] * 10, [1] * 9 + [0]) - 0.05) < 1e-12
    assert abs(auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) - 0.75) < 1e-12
    print(f"calibrate_probe self-test ok ({path}; fit a {fa:.3f} b {fb:.3f})", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--probe", required=True, help="confidence file to calibrate")
    ap.add_argument("--features", default="", help="calibration feature rows, comma-separated files")
    ap.add_argument("--test-features", default="", help="report only: feature rows to measure on, comma-separated")
    ap.add_argument("--modes", default="slow,mixed", help="answer modes the fit and the report read")
    ap.add_argument("--head-dim", type=int, default=32, help="the model's head dimension (the embedded reasoner: 32)")
    ap.add_argument("-o", "--output", default="", help="calibrated confidence file to write")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--describe", default="", help="how the calibration rows were made, kept in the file's info")
    ap.add_argument("--self-test", action="store_true", help="check the fold, the file round trip and the fit, and exit")
    args = ap.parse_args()
    if args.self_test:
        self_test(args.probe)
        return
    modes = args.modes.split(",")
    p = read_probe(args.probe)
    out = {"probe": args.probe}
    a, b = 1.0, 0.0
    if args.features:
        rows = [r for f in args.features.split(",") for r in final_logits(f, p, args.head_dim, modes)]
        a, b = fit_platt([r[1] for r in rows], [r[2] for r in rows])
        print(f"Platt scaling on {len(rows)} finished answers: a {a:.4f} b {b:.4f}", file=sys.stderr)
        if not a > 0:
            sys.exit("the calibration rows rank answers the other way round (a <= 0): not writing a probe")
        out["platt"] = {"a": a, "b": b, "n": len(rows), "features": args.features}
        out["calibration"] = report("calibration", rows, a, b, modes)
    if args.test_features:
        rows = [r for f in args.test_features.split(",") for r in final_logits(f, p, args.head_dim, modes)]
        out["test"] = report("test", rows, a, b, modes)
    if args.output:
        if not args.features:
            sys.exit("-o needs --features")
        flat = fold(p, a, b)
        n, hid = len(flat), p["hid"]
        cut = p["cut_below"]
        if 0 < cut < 1:
            cut = sigmoid(a * math.log(cut / (1 - cut)) + b)
        try:
            info = json.loads(p["info"].decode())
        except ValueError:
            info = {"previous_info": p["info"].decode(errors="replace")}
        info["platt"] = {"a": round(a, 6), "b": round(b, 6), "n": out["platt"]["n"],
                         "features": args.describe or args.features, "cut_below_before": p["cut_below"]}
        write_probe(args.output, p, flat, cut, json.dumps(info).encode())
        check = read_probe(args.output)
        assert check["in"] == p["in"] and check["hid"] == hid and len(check["flat"]) == n
        print(f"wrote {args.output} (early-cut threshold {p['cut_below']:.4f} -> {cut:.4f})", file=sys.stderr)
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
