#!/usr/bin/env python3
"""A server's CPU samples by step of the request path (docs/performance.md, session 43).

Reads `perf script -F comm,ip,sym` output of a `perf record --call-graph dwarf,60000` (the
deep stack size matters: serde's recursion cuts shorter stacks off before they reach the
registry), and puts each sample in the innermost frame that names one of the steps given;
samples whose stack reaches none are counted by whether they decode, encode or neither.

    perf record -F 499 --call-graph dwarf,60000 -p PID -o perf.data -- sleep 6
    perf script -i perf.data --no-inline -F comm,ip,sym > perf.txt
    python3 tools/perf_steps.py perf.txt [STEP,STEP,...]

A step is a substring of a symbol (`record_managers`, `Writer::run`, ...); the default list
covers a write's path through the registry. `--within STEP` lists instead what the frames
right below STEP are, by share of all samples.
"""
import re
import sys
from collections import Counter

DEFAULT_STEPS = (
    "record_managers,admit_written,validate_object,encode_stored,encode_if_changed,"
    "::outgoing,Store>::create,Store>::update,codec::checked,check_type,watching::follow,"
    "cache::run,Writer::run,Authentication,Authorization,PriorityAndFairness,Audit,"
    "Instrument,RestStorage>::create,RestStorage>::update,resource_answer,h2::,rustls,hyper::"
)


def samples(path, strip=True):
    """Each sample's frames, innermost first, generic arguments left out unless `strip` is
    false (then as perf names them)."""
    frames = None
    with open(path, errors="replace") as text:
        for line in text:
            if not line.strip():
                if frames:
                    yield frames
                frames = None
            elif not line[0].isspace():
                frames = []
            elif frames is not None:
                symbol = line.strip().split(" ", 1)[-1]
                if strip:
                    symbol = re.sub(r"\+0x[0-9a-f]+$", "", symbol)
                    symbol = re.sub(r"<[^<>]*>", "", symbol)
                frames.append(symbol)
    if frames:
        yield frames


def by_step(all_samples, steps):
    counts = Counter()
    for frames in all_samples:
        step = next((s for f in frames for s in steps if s in f), None)
        if step is None:
            decodes = any("de::" in f or "Deserialize" in f for f in frames)
            encodes = any("ser::" in f for f in frames)
            step = "(other: decoding)" if decodes else "(other: encoding)" if encodes else "(other)"
        counts[step] += 1
    return counts


def within(all_samples, step):
    counts = Counter()
    for frames in all_samples:
        at = next((i for i, f in enumerate(frames) if step in f), None)
        if at is not None:
            counts[frames[at - 1][:140] if at > 0 else "(itself)"] += 1
    return counts


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    all_samples = list(samples(args[0]))
    if len(args) == 3 and args[1] == "--within":
        counts = within(all_samples, args[2])
    else:
        steps = (args[1] if len(args) > 1 else DEFAULT_STEPS).split(",")
        counts = by_step(all_samples, steps)
    total = len(all_samples) or 1
    print(f"{len(all_samples)} samples")
    for name, n in counts.most_common(30):
        print(f"{n / total * 100:5.1f}%  {name}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        pass
