#!/usr/bin/env python3
"""Offline check of one idea for the confidence probe's features (docs/results/2026-12-05-kv-probe.md):
does a tinygsm response check out against itself and its question? Features: every "a op b = c"
right; every operand a number of the question or an earlier result; every number of the question
used. Combined with MaxProb by a logistic regression fitted on validation answers, AUROC on test
answers. Inputs: `kvscope eval-confidence --details` files and `kvscope tinygsm --jsonl` files of
the same split, seed and style.

  answer_checks.py VAL_DETAILS VAL_PROBLEMS TEST_DETAILS TEST_PROBLEMS
"""
import json
import math
import re
import sys

EQ = re.compile(r'(\d+)\s*([-+*/x])\s*(\d+)\s*=\s*(-?\d+)')
NUM = re.compile(r'(?<![\w(])(\d+)(?![\w)])')
WORDS = {'twice': 2, 'double': 2, 'half': 2, 'triple': 3, 'three times': 3}


def question_numbers(q):
    q = re.sub(r'\(\d+\)', ' ', q)  # statement labels are not quantities
    return [int(x) for x in NUM.findall(q)] + [v for w, v in WORDS.items() if w in q]


def features(question, out, max_prob):
    ns = question_numbers(question)
    slips = ungrounded = 0
    used, results = set(), []
    for a, op, b, c in EQ.findall(out):
        a, b, c = int(a), int(b), int(c)
        v = a + b if op == '+' else a - b if op == '-' else a * b if op in '*x' else (a / b if b else None)
        slips += v is None or abs(v - c) > 1e-9
        for x in (a, b):
            if x in ns:
                used.add(x)
            elif x not in results:
                ungrounded += 1
        results.append(c)
    unused = sum(1 for n in set(ns) if n not in used and n not in results)
    mp = min(max(max_prob, 1e-6), 1 - 1e-6)
    return [math.log(mp / (1 - mp)), float(slips == 0), float(ungrounded == 0), float(unused == 0),
            float(ungrounded), float(unused)]


def load(details, problems):
    qs = {}
    for line in open(problems):
        j = json.loads(line)
        qs[j['index']] = j['messages'][0]['content']
    rows = []
    for line in open(details):
        j = json.loads(line)
        rows.append((features(qs[j['index']], j['output'], j['signals']['max_prob']), bool(j['correct']),
                     j['signals']['max_prob']))
    return rows


def auroc(scores, ok):
    pairs = sorted(zip(scores, ok))
    npos = sum(ok)
    nneg = len(ok) - npos
    rank_sum, i = 0.0, 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        rank_sum += sum(1 for k in range(i, j) if pairs[k][1]) * ((i + j - 1) / 2 + 1)  # ties: average rank
        i = j
    return (rank_sum - npos * (npos + 1) / 2) / (npos * nneg)


def fit(rows, l2=1e-3, iters=2000, lr=0.2):
    X = [r[0] for r in rows]
    y = [1.0 if r[1] else 0.0 for r in rows]
    d = len(X[0])
    mu = [sum(x[k] for x in X) / len(X) for k in range(d)]
    sd = [max(1e-6, math.sqrt(sum((x[k] - mu[k]) ** 2 for x in X) / len(X))) for k in range(d)]
    Z = [[(x[k] - mu[k]) / sd[k] for k in range(d)] for x in X]
    w, b = [0.0] * d, 0.0
    for _ in range(iters):
        gw, gb = [0.0] * d, 0.0
        for z, t in zip(Z, y):
            s = max(-30.0, min(30.0, b + sum(wi * zi for wi, zi in zip(w, z))))
            p = 1 / (1 + math.exp(-s))
            for k in range(d):
                gw[k] += (p - t) * z[k]
            gb += p - t
        w = [wi - lr * (g / len(Z) + l2 * wi) for wi, g in zip(w, gw)]
        b -= lr * gb / len(Z)
    return lambda x: b + sum(wi * (xi - m) / s for wi, xi, m, s in zip(w, x, mu, sd))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    train, test = load(sys.argv[1], sys.argv[2]), load(sys.argv[3], sys.argv[4])
    ok = [r[1] for r in test]
    wrong = [r for r in test if not r[1]]
    score = fit(train)
    arith_only = fit([(r[0][:2], r[1], r[2]) for r in train])
    print(json.dumps({
        'n_test': len(test), 'accuracy': sum(ok) / len(ok),
        'wrong_with_slip': sum(r[0][1] == 0 for r in wrong), 'wrong_with_unused_number': sum(r[0][3] == 0 for r in wrong),
        'wrong_with_ungrounded_operand': sum(r[0][2] == 0 for r in wrong), 'wrong': len(wrong),
        'auroc_max_prob': auroc([r[2] for r in test], ok),
        'auroc_max_prob_arithmetic': auroc([arith_only(r[0][:2]) for r in test], ok),
        'auroc_max_prob_arithmetic_grounding': auroc([score(r[0]) for r in test], ok)}))


if __name__ == '__main__':
    main()
