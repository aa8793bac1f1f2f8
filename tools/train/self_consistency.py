#!/usr/bin/python3
"""Majority vote over sampled answers through a running `kvscope serve` (self-consistency).

Asks each question of a JSON-lines file ("question", "answer") as a chat message with `n` samples
at `temperature` (reasoning_effort high), takes the last integer of each answer, and reports the
first sample's accuracy, the majority's accuracy and the ECE of the vote share read as P(correct).

  self_consistency.py PORT MODEL_ID FILE.jsonl N TEMPERATURE
  e.g. kvscope serve -m models/kvscope-reasoner.gguf --port 8391 -t 1 &
       self_consistency.py 8391 kvscope-reasoner data/natural/dev.jsonl 16 0.8
"""
import collections
import concurrent.futures as cf
import json
import re
import sys
import urllib.request


def main():
    port, model, path, n, temp = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    items = [json.loads(l) for l in open(path) if l.strip()]

    def ask(it):
        body = {"model": model, "messages": [{"role": "user", "content": it["question"]}], "n": n,
                "temperature": temp, "max_tokens": 256, "reasoning_effort": "high", "seed": 7}
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        r = json.load(urllib.request.urlopen(req, timeout=600))
        out = []
        for c in r["choices"]:
            nums = re.findall(r"-?\d+", c["message"].get("content") or "")
            out.append(int(nums[-1]) if nums else None)
        return out

    answers = list(cf.ThreadPoolExecutor(8).map(ask, items))
    first = majority = 0
    rows = []
    for it, a in zip(items, answers):
        votes = collections.Counter(x for x in a if x is not None)
        top, count = votes.most_common(1)[0] if votes else (None, 0)
        first += a[0] == it["answer"]
        majority += top == it["answer"]
        rows.append((count / len(a), top == it["answer"]))
    bins = collections.defaultdict(list)
    for p, ok in rows:
        bins[min(int(p * 10), 9)].append((p, ok))
    ece = sum(abs(sum(p for p, _ in b) - sum(o for _, o in b)) for b in bins.values()) / len(rows)
    print(json.dumps({"n": len(items), "samples": n, "temperature": temp, "first": first / len(items),
                      "majority": majority / len(items), "vote_share_ece": ece}))


if __name__ == "__main__":
    main()
