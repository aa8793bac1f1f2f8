#!/usr/bin/env python3
"""Syntax check of deploy/k8s/*.yaml without a cluster: every document parses, has the fields its
kind requires, selectors match their pod labels, probes hit /health, the replicas carry the
Prometheus scrape annotations, and the router's nginx.conf passes `nginx -t` when nginx is here
(upstream host names mapped to loopback)."""
import glob, os, re, shutil, subprocess, sys, tempfile
import yaml

def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)

here = os.path.dirname(os.path.abspath(__file__))
docs = []
for path in sorted(glob.glob(os.path.join(here, "*.yaml"))):
    with open(path) as f:
        docs += [(path, d) for d in yaml.safe_load_all(f) if d is not None]
if not docs:
    fail("no manifests")
kinds = {}
for path, d in docs:
    for k in ("apiVersion", "kind", "metadata"):
        if k not in d:
            fail(f"{path}: a document lacks {k}")
    kinds.setdefault(d["kind"], []).append(d)
    if d["kind"] in ("Deployment", "StatefulSet"):
        spec = d["spec"]
        sel = spec["selector"]["matchLabels"]
        labels = spec["template"]["metadata"]["labels"]
        if any(labels.get(k) != v for k, v in sel.items()):
            fail(f"{d['metadata']['name']}: selector {sel} does not match pod labels {labels}")
        if not spec["template"]["spec"]["containers"]:
            fail(f"{d['metadata']['name']}: no containers")
for need in ("ConfigMap", "Deployment", "StatefulSet", "Service"):
    if need not in kinds:
        fail(f"no {need}")
replicas = [d for d in kinds["StatefulSet"] if d["metadata"]["name"] == "kvscope"]
if not replicas:
    fail("no kvscope StatefulSet")
pod = replicas[0]["spec"]["template"]
ann = pod["metadata"].get("annotations", {})
if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/path") != "/metrics":
    fail("replicas lack the Prometheus scrape annotations")
c = pod["spec"]["containers"][0]
for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
    if c.get(probe, {}).get("httpGet", {}).get("path") != "/health":
        fail(f"replica {probe} is not on /health")
services = {d["metadata"]["name"] for d in kinds["Service"]}
if replicas[0]["spec"]["serviceName"] not in services:
    fail("the StatefulSet's serviceName has no Service")
conf = kinds["ConfigMap"][0]["data"]["nginx.conf"]
nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
if nginx:
    tmp = tempfile.mkdtemp()
    test_conf = re.sub(r"server (kvscope-\d)\.kvscope-replicas:8080", lambda m: "server 127.0.0.1:" + str(18080 + int(m.group(1)[-1])), conf)
    test_conf = test_conf.replace("/tmp/", tmp + "/").replace("listen 8080;", "listen 127.0.0.1:18079;")
    with open(os.path.join(tmp, "nginx.conf"), "w") as f:
        f.write(test_conf)
    r = subprocess.run([nginx, "-t", "-q", "-p", tmp, "-c", os.path.join(tmp, "nginx.conf"), "-e", os.path.join(tmp, "error.log")],
                       capture_output=True, text=True)
    shutil.rmtree(tmp, ignore_errors=True)
    if r.returncode != 0:
        fail("router nginx.conf: " + r.stderr.strip())
print(f"ok: {len(docs)} manifests" + (" (router config passes nginx -t)" if nginx else " (nginx not found: router config not checked)"))
