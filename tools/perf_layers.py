#!/usr/bin/env python3
"""A server's CPU samples by layer of the request path (docs/performance.md, session 48).

Reads `perf script --no-inline -F comm,ip,sym` output of a `perf record --call-graph
dwarf,60000` of the API server, and puts each sample in the innermost frame that names a
layer: the security filters with the crates they call, the handler, the other filters,
HTTP/2, TLS; the rest (runtime, kernel, allocator outside any layer, background threads)
is counted apart. Shares are of all samples.

    perf record -F 499 --call-graph dwarf,60000 -p PID -o perf.data -- sleep 6
    perf script -i perf.data --no-inline -F comm,ip,sym > perf.txt
    python3 tools/perf_layers.py perf.txt
"""
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_steps import samples  # noqa: E402

SECURITY = ("authentication", "impersonation", "authorization", "priority and fairness", "audit")
LAYERS = (
    ("authentication", ("filters::authentication", "capstan_auth::authn", "capstan_auth_remote")),
    ("impersonation", ("filters::impersonation",)),
    ("authorization", ("filters::authorization", "capstan_auth::authz")),
    ("priority and fairness", ("filters::fairness", "capstan_flowcontrol")),
    ("audit", ("filters::audit", "capstan_audit")),
    ("handler", ("handler::handle",)),
    ("other filters", ("capstan_server::filters::", "capstan_server::request_info")),
    ("HTTP/2", ("h2::", "hyper::", "hyper_util::")),
    ("TLS", ("rustls", "tokio_rustls")),
)


def layer_of(frames):
    for frame in frames:
        for name, markers in LAYERS:
            if any(m in frame for m in markers):
                return name
    return "other (runtime, kernel, allocator)"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    counts = Counter(layer_of(frames) for frames in samples(sys.argv[1], strip=False))
    total = sum(counts.values()) or 1
    print(f"{total} samples")
    for name, count in counts.most_common():
        print(f"{100 * count / total:5.1f}%  {name}")
    security = sum(counts[name] for name in SECURITY)
    print(f"{100 * security / total:5.1f}%  security layer in all")


if __name__ == "__main__":
    main()
