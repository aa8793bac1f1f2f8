#!/usr/bin/env python3
"""Connection-level attacks on `kvscope serve` (issue 36), on 127.0.0.1 only, each bounded in time.

Starts the given binary with the embedded default model on a free port and reports, per case, what
the server did: slowloris (/health reachability under N slow connections), a chunked body past
--max-body, a header flood, a second server on the same port, a form-typed body over 8 KB, a POST
without Content-Length, pipelining, HTTP/1.0 streams, and shutdown time under slow readers.

    python3 bench/http_attacks.py --bin build/release/kvscope [--slow 300 --seconds 20] [--only-slowloris] [-- serve flags]
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(binary, port, *extra):
    p = subprocess.Popen([binary, "serve", "--port", str(port), "--max-body", "1024", *extra],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(300):
        try:
            if request(port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 1)[0] == 200:
                return p
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("server did not come up")


def request(port, raw, timeout=5.0, source="127.0.0.1"):
    """One request on a fresh connection from `source`; (status, head+body bytes) read until close or timeout."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))
    try:
        s.sendall(raw)
        data = b""
        while True:
            try:
                b = s.recv(65536)
            except socket.timeout:
                break
            if not b:
                break
            data += b
    finally:
        s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return status, data


def slowloris(port, n, seconds):
    """n connections from 127.0.0.1 send one header byte every 2 s; /health is asked from 127.0.0.1
    and from 127.0.0.2 (another client address) every 2 s with a 2 s timeout."""
    socks = []
    for _ in range(n):
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=2))
        except OSError:
            break
    req = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200 + b"\r\n\r\n"
    ok = tried = ok2 = 0
    worst = worst2 = 0.0
    t_end = time.time() + seconds
    i = 0
    while time.time() < t_end:
        for s in socks:
            try:
                s.send(req[i:i + 1])
            except OSError:
                pass
        i += 1
        t0 = time.time()
        tried += 1
        try:
            st, _ = request(port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 2)
            ok += st == 200
        except OSError:
            pass
        worst = max(worst, time.time() - t0)
        t1 = time.time()
        try:
            st, _ = request(port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 2, "127.0.0.2")
            ok2 += st == 200
        except OSError:
            pass
        worst2 = max(worst2, time.time() - t1)
        time.sleep(max(0.0, 2 - (time.time() - t0)))
    for s in socks:
        s.close()
    return {"slow_connections": len(socks), "health_ok_same_address": f"{ok}/{tried}", "worst_s": round(worst, 2),
            "health_ok_other_address": f"{ok2}/{tried}", "worst_other_s": round(worst2, 2)}


def chunked_body(port, mib):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    body = b'{"prompt":"hi","max_tokens":1,"pad":"' + b"a" * (mib << 20) + b'"}'
    sent = 0
    try:
        for k in range(0, len(body), 65536):
            piece = body[k:k + 65536]
            s.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            sent += len(piece)
        s.sendall(b"0\r\n\r\n")
    except OSError:
        pass
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return {"body_mib": mib, "status": status, "sent_mib": round(sent / 2**20, 2)}


def header_flood(port, lines):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    t0 = time.time()
    sent = 0
    try:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        chunk = b"X-Flood: 0123456789012345678901234567890123456789012345678901234567890123456789012345\r\n" * 1000
        for _ in range(lines // 1000):
            s.sendall(chunk)
            sent += len(chunk)
        s.sendall(b"\r\n")
    except OSError:
        pass
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return {"status": status, "sent_mb": round(sent / 1e6, 1), "s": round(time.time() - t0, 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--slow", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--only-slowloris", action="store_true")
    ap.add_argument("serve_args", nargs="*", help="more flags for serve (after --)")
    a = ap.parse_args()
    port = free_port()
    p = start(a.bin, port, "--shutdown-grace", "2", *a.serve_args)
    if a.only_slowloris:
        try:
            print(json.dumps(slowloris(port, a.slow, a.seconds)))
        finally:
            p.kill()
            p.wait()
        return
    rss = lambda: int(open(f"/proc/{p.pid}/status").read().split("VmRSS:")[1].split()[0]) // 1024
    out = {}
    out["slowloris"] = slowloris(port, a.slow, a.seconds)
    out["chunked_5mib_under_1mib_limit"] = chunked_body(port, 5)
    rss0 = rss()
    out["header_flood_1m_lines"] = header_flood(port, 1_000_000)
    out["header_flood_1m_lines"]["rss_growth_mb"] = rss() - rss0
    second = subprocess.Popen([a.bin, "serve", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        second.wait(timeout=10)
        out["second_serve_same_port"] = {"exit": second.returncode, "stderr": second.stderr.read().strip()[-160:]}
    except subprocess.TimeoutExpired:
        second.kill()
        second.wait()
        out["second_serve_same_port"] = {"exit": None, "stderr": "still serving after 10 s (started on the taken port)"}
    body = b'{"prompt":"hi","max_tokens":1,"user":"' + b"u" * 9000 + b'"}'
    st, _ = request(port, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    out["form_body_9kb"] = st
    t0 = time.time()
    st, data = request(port, b"POST /v1/sessions/x/save HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 10)
    out["post_without_length"] = {"status": st, "s": round(time.time() - t0, 2),
                                  "message": data.split(b"\r\n\r\n", 1)[-1][:120].decode(errors="replace")}
    post = b'{"prompt":"hi","max_tokens":2}'
    one = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(post) + post
    _, data = request(port, one * 3 + b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5)
    out["pipelined_4_answered"] = data.count(b"HTTP/1.1 ")
    sbody = b'{"prompt":"hi","max_tokens":4,"stream":true}'
    _, data = request(port, b"POST /v1/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                      % len(sbody) + sbody, 5)
    out["http10_stream_chunked"] = b"transfer-encoding: chunked" in data.lower()
    # Shutdown under slow readers: 8 streams read 64 bytes every 0.5 s, then SIGTERM (grace 2 s).
    stop = threading.Event()

    def reader(i):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        b = b'{"prompt":"story %d","max_tokens":400,"temperature":1,"stream":true,"n":16}' % i
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                  % len(b) + b)
        while not stop.is_set():
            try:
                if not s.recv(64):
                    break
            except OSError:
                break
            time.sleep(0.5)
        s.close()

    ts = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    time.sleep(3)
    t0 = time.time()
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    out["shutdown_s_grace_2"] = round(time.time() - t0, 1)
    stop.set()
    for t in ts:
        t.join()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
