#!/usr/bin/env python3
"""Start-up time and idle memory of capstan-apiserver (docs/performance.md).

Starts the release binary on DATA_DIR (extra options after it), polls /readyz over TLS every
millisecond until it answers 200, waits 3 s, reads VmRSS, stops the server; four times.

    python3 tools/startup.py DATA_DIR [apiserver options...]

To compare builds, name them in BINARIES (space-separated): they take turns, four starts
each, for ROUNDS rounds (default 3), after one start left out (cold caches); WAIT sets the
seconds before the memory is read (0: no wait, no memory figure). Each build's median
and range is printed at the end.

    BINARIES="/tmp/before /tmp/after" ROUNDS=12 WAIT=0 python3 tools/startup.py DATA_DIR

FRESH=1 makes every start a new cluster's first: each on an empty directory under DATA_DIR
(its certificates made, the default objects written), removed after it.

    BINARIES="/tmp/before /tmp/after" FRESH=1 WAIT=0 python3 tools/startup.py DATA_DIR

STEPS=N starts the server N times at --v=4 instead and prints where a start's time goes:
the median time, since the process was started, at which each step the server notes
("start-up" lines) was done, and of the first /readyz 200.

    STEPS=9 python3 tools/startup.py DATA_DIR
"""
import datetime
import os
import re
import socket
import ssl
import statistics
import subprocess
import tempfile
import sys
import time

BINARY = "target/release/capstan-apiserver"
PORT = 16460


# Made once: loading the system's CA store takes Python ~25 ms, which a context made for each
# start counted in the start's time (and took from the server's two cores).
CONTEXT = ssl.create_default_context()
CONTEXT.check_hostname = False
CONTEXT.verify_mode = ssl.CERT_NONE


def once(binary, data_dir, extra, wait, log=None):
    if os.environ.get("FRESH"):
        os.makedirs(data_dir, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=data_dir) as fresh:
            return started_once(binary, fresh, extra, wait, log)
    return started_once(binary, data_dir, extra, wait, log)


def started_once(binary, data_dir, extra, wait, log):
    started = time.monotonic()
    server = subprocess.Popen(
        [binary, "--data-dir", data_dir, "--cert-dir", data_dir + "/pki",
         "--bind-address", "127.0.0.1", "--secure-port", str(PORT)] + extra,
        stderr=log or subprocess.DEVNULL)
    while True:
        try:
            with socket.create_connection(("127.0.0.1", PORT), timeout=1) as raw:
                with CONTEXT.wrap_socket(raw) as tls:
                    tls.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if b" 200 " in tls.recv(100):
                        break
        except OSError:
            time.sleep(0.001)
    ready_ms = (time.monotonic() - started) * 1000
    rss_mb = None
    if wait > 0:
        time.sleep(wait)
        with open(f"/proc/{server.pid}/status") as status:
            rss_kb = next(int(l.split()[1]) for l in status if l.startswith("VmRSS"))
        rss_mb = rss_kb / 1024
    server.terminate()
    server.wait()
    return ready_ms, rss_mb


# A klog line's time of day, and the step a "start-up" line names.
KLOG_TIME = re.compile(r"^[IWE]\d{4} (\d\d):(\d\d):(\d\d\.\d+)")
STEP = re.compile(r'"start-up" step="([^"]+)"|"(serving)"')


def steps(binary, data_dir, extra, starts):
    """The median time of each noted step over `starts` starts, in ms since the process
    was started (the log's wall-clock stamps against the launch's)."""
    done = {}
    for _ in range(starts):
        with tempfile.TemporaryFile("w+") as log:
            launched = time.time()
            ready_ms, _ = once(binary, data_dir, extra + ["--v=4"], 0, log)
            log.seek(0)
            midnight = datetime.datetime.fromtimestamp(launched, datetime.timezone.utc).replace(
                hour=0, minute=0, second=0, microsecond=0).timestamp()
            for line in log:
                stamp, step = KLOG_TIME.match(line), STEP.search(line)
                if stamp and step:
                    h, m, sec = int(stamp[1]), int(stamp[2]), float(stamp[3])
                    at = (midnight + h * 3600 + m * 60 + sec - launched) * 1000
                    done.setdefault(step[1] or step[2], []).append(at)
        done.setdefault("first /readyz 200", []).append(ready_ms)
        time.sleep(0.5)
    for step, times in sorted(done.items(), key=lambda kv: statistics.median(kv[1])):
        print(f"{statistics.median(times):7.1f} ms  {step}")


def main():
    data_dir, extra = sys.argv[1], sys.argv[2:]
    # The poll is anonymous: with the default AlwaysAllow authorizer anonymous requests are
    # refused, so an authorizer that lets them read /readyz is chosen unless one is given.
    if not any(a.startswith("--authorization-mode") for a in extra):
        extra = extra + ["--authorization-mode=Node,RBAC"]
    wait = float(os.environ.get("WAIT", "3"))
    binaries = os.environ.get("BINARIES", "").split()
    if os.environ.get("STEPS"):
        steps((binaries or [BINARY])[0], data_dir, extra, int(os.environ["STEPS"]))
        return
    if not binaries:
        for _ in range(4):
            ready_ms, rss_mb = once(BINARY, data_dir, extra, wait)
            memory = f", idle RSS {rss_mb:.1f} MB" if rss_mb is not None else ""
            print(f"ready {ready_ms:.1f} ms{memory}")
        return
    once(binaries[0], data_dir, extra, 0)
    readies = {binary: [] for binary in binaries}
    for _ in range(int(os.environ.get("ROUNDS", "3"))):
        for binary in binaries:
            for _ in range(4):
                ready_ms, _ = once(binary, data_dir, extra, wait)
                readies[binary].append(ready_ms)
                # The stopped server's last writes and exit are not the next one's cost.
                time.sleep(0.5)
    for binary, times in readies.items():
        print(f"{binary}: ready median {statistics.median(times):.1f} ms "
              f"({min(times):.1f}-{max(times):.1f}, {len(times)} starts)")


if __name__ == "__main__":
    main()
