#!/usr/bin/env python3
"""Cost of a planned study from a pilot run's tokens per session.

    estimate-cost.py RUN_DIR --input-usd-per-mtok 3 --output-usd-per-mtok 15 --sessions 219

Reads RUN_DIR/sessions.csv (coding sessions only) and prints, per arm, the mean turns
and tokens per session, the price of one session at the given rates, and the price of
--sessions sessions per arm. Where the pilot recorded a real cost (cost_usd), that mean
is printed too, so the rates can be checked against what the agent was billed.
"""
import argparse
import csv
import sys
from collections import OrderedDict


def mean(values):
    return sum(values) / len(values) if values else None


def number(cell):
    try:
        return float(cell)
    except (TypeError, ValueError):
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--input-usd-per-mtok", type=float, required=True)
    parser.add_argument("--output-usd-per-mtok", type=float, required=True)
    parser.add_argument("--sessions", type=int, required=True, help="planned coding sessions per arm")
    args = parser.parse_args()
    path = f"{args.run_dir}/sessions.csv"
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r.get("kind") == "coding"]
    except OSError as e:
        sys.stderr.write(f"estimate-cost.py: cannot read '{path}': {e.strerror}\n")
        return 2
    missing = {"arm", "turns", "input_tokens", "output_tokens"} - set(rows[0] if rows else {})
    if not rows or missing:
        sys.stderr.write(f"estimate-cost.py: '{path}' has no coding sessions with {sorted(missing) or 'rows'}\n")
        return 2
    arms = OrderedDict()
    for r in rows:
        arms.setdefault(r["arm"], []).append(r)
    print("| arm | pilot sessions | turns/session | input tok/session | output tok/session | usd/session | billed usd/session | usd for planned |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    grand = 0.0
    for arm, sessions in arms.items():
        turns = mean([v for v in (number(s["turns"]) for s in sessions) if v is not None])
        tin = mean([v for v in (number(s["input_tokens"]) for s in sessions) if v is not None]) or 0.0
        tout = mean([v for v in (number(s["output_tokens"]) for s in sessions) if v is not None]) or 0.0
        billed = mean([v for v in (number(s.get("cost_usd")) for s in sessions) if v is not None])
        per = tin / 1e6 * args.input_usd_per_mtok + tout / 1e6 * args.output_usd_per_mtok
        total = per * args.sessions
        grand += total
        fmt = lambda v, p: "" if v is None else f"{v:,.{p}f}"
        print(f"| {arm} | {len(sessions)} | {fmt(turns, 1)} | {tin:,.0f} | {tout:,.0f} | {per:.2f} | {fmt(billed, 2)} | {total:,.2f} |")
    print(f"\nall arms, {args.sessions} coding sessions each: about ${grand:,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
