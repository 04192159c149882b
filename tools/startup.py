#!/usr/bin/env python3
"""Start-up time and idle memory of capstan-apiserver (docs/performance.md).

Starts the release binary on DATA_DIR (extra options after it), polls /readyz over TLS every
millisecond until it answers 200, waits 3 s, reads VmRSS, stops the server; four times.

    python3 tools/startup.py DATA_DIR [apiserver options...]
"""
import socket
import ssl
import subprocess
import sys
import time

BINARY = "target/release/capstan-apiserver"
PORT = 16460


def once(data_dir, extra):
    started = time.monotonic()
    server = subprocess.Popen(
        [BINARY, "--data-dir", data_dir, "--cert-dir", data_dir + "/pki",
         "--bind-address", "127.0.0.1", "--secure-port", str(PORT)] + extra,
        stderr=subprocess.DEVNULL)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    while True:
        try:
            with socket.create_connection(("127.0.0.1", PORT), timeout=1) as raw:
                with context.wrap_socket(raw) as tls:
                    tls.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if b" 200 " in tls.recv(100):
                        break
        except OSError:
            time.sleep(0.001)
    ready_ms = (time.monotonic() - started) * 1000
    time.sleep(3)
    with open(f"/proc/{server.pid}/status") as status:
        rss_kb = next(int(l.split()[1]) for l in status if l.startswith("VmRSS"))
    server.terminate()
    server.wait()
    return ready_ms, rss_kb / 1024


def main():
    data_dir, extra = sys.argv[1], sys.argv[2:]
    # The poll is anonymous: with the default AlwaysAllow authorizer anonymous requests are
    # refused, so an authorizer that lets them read /readyz is chosen unless one is given.
    if not any(a.startswith("--authorization-mode") for a in extra):
        extra = extra + ["--authorization-mode=Node,RBAC"]
    for _ in range(4):
        ready_ms, rss_mb = once(data_dir, extra)
        print(f"ready {ready_ms:.1f} ms, idle RSS {rss_mb:.1f} MB")


if __name__ == "__main__":
    main()
