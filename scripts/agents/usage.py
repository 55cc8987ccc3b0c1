#!/usr/bin/env python3
"""Turns an agent CLI's captured output into loopbench's usage file (a JSON object with
turns, input_tokens, output_tokens, cost_usd and optionally status).

    usage.py claude|codex|aider CAPTURE > "$LOOPBENCH_USAGE_FILE"

Fields the output does not give are left out (the harness records them as empty).
Lines that are not what the parser expects are skipped: a wrapper must never fail
because an agent printed something new.
"""
import json
import re
import sys


def claude(lines):
    """`claude -p --output-format stream-json --verbose`: the last `result` line.
    input_tokens counts every prompt token, cached or not, as loopbench's own
    stream-json reader does."""
    result = None
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "result":
            result = obj
    if result is None:
        return {"status": "interrupted"}
    out = {}
    if isinstance(result.get("num_turns"), int):
        out["turns"] = result["num_turns"]
    usage = result.get("usage") or {}
    parts = [usage.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    if any(isinstance(p, int) for p in parts):
        out["input_tokens"] = sum(p for p in parts if isinstance(p, int))
    if isinstance(usage.get("output_tokens"), int):
        out["output_tokens"] = usage["output_tokens"]
    if isinstance(result.get("total_cost_usd"), (int, float)):
        out["cost_usd"] = result["total_cost_usd"]
    if result.get("subtype") == "error_max_turns":
        out["status"] = "out_of_budget"
    return out


def codex(lines):
    """`codex exec --json`: usage summed over `turn.completed` events (input_tokens
    already includes cached_input_tokens; reasoning tokens count as output). Codex
    reports no model-call count: turns = completed items (commands, file changes,
    messages, tool calls). No cost: Codex does not print one."""
    out = {"turns": 0}
    input_tokens = output_tokens = None
    failed = False
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        kind = obj.get("type")
        if kind == "item.completed":
            out["turns"] += 1
        elif kind == "turn.completed":
            usage = obj.get("usage") or {}
            if isinstance(usage.get("input_tokens"), int):
                input_tokens = (input_tokens or 0) + usage["input_tokens"]
            out_part = [usage.get(k) for k in ("output_tokens", "reasoning_output_tokens")]
            if any(isinstance(p, int) for p in out_part):
                output_tokens = (output_tokens or 0) + sum(p for p in out_part if isinstance(p, int))
        elif kind in ("turn.failed", "error"):
            failed = True
    if input_tokens is not None:
        out["input_tokens"] = input_tokens
    if output_tokens is not None:
        out["output_tokens"] = output_tokens
    if failed:
        out["status"] = "interrupted"
    return out


TOKENS = re.compile(r"^Tokens: (.*)\. Cost: \$([0-9.]+) message, \$([0-9.]+) session\.?\s*$")
PART = re.compile(r"([0-9.]+)(k|M)? (sent|received|cache write|cache hit)")


def count(number, suffix):
    """Aider rounds: "2.3k" is 2,300 (so tokens are exact only below 1,000)."""
    scale = {"k": 1_000, "M": 1_000_000}.get(suffix or "", 1)
    return int(round(float(number) * scale))


def aider(lines):
    """aider's `Tokens: 2.3k sent, 1.1k cache write, 145 received. Cost: $0.01 message,
    $0.02 session.` lines: one per model call. input_tokens = sent + cache write + cache
    hit, output_tokens = received, cost_usd = the last session cost."""
    out = {}
    turns = input_tokens = output_tokens = 0
    cost = None
    for line in lines:
        m = TOKENS.match(line.strip())
        if not m:
            continue
        turns += 1
        for number, suffix, what in PART.findall(m.group(1)):
            if what == "received":
                output_tokens += count(number, suffix)
            else:
                input_tokens += count(number, suffix)
        cost = float(m.group(3))
    if turns:
        out = {"turns": turns, "input_tokens": input_tokens, "output_tokens": output_tokens}
        if cost is not None:
            out["cost_usd"] = cost
    return out


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("claude", "codex", "aider"):
        sys.stderr.write("usage: usage.py claude|codex|aider CAPTURE\n")
        return 2
    try:
        with open(sys.argv[2], encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        sys.stderr.write(f"usage.py: cannot read '{sys.argv[2]}': {e.strerror}\n")
        return 2
    parse = {"claude": claude, "codex": codex, "aider": aider}[sys.argv[1]]
    json.dump(parse(lines), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
