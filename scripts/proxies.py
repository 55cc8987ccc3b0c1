#!/usr/bin/env python3
"""Prints the code-shape proxies of a source tree (default `src/`).

- the total lines of `src/cmd/*.rs` (the command layer should stay thin);
- every function longer than 80 lines that is not a flat dispatch, with file:line and
  length, longest first. A function's length runs from the line of `fn` to the line of its
  closing brace. A flat dispatch is a function whose body is one `match` whose arms are
  each a call on one line (rustfmt may wrap a long call's arguments; such an arm still
  counts as one call). `#[cfg(test)]` modules, files named `*_tests.rs` and files under a
  `tests/` folder are not product code and are skipped.

Usage: scripts/proxies.py [SRC_DIR] [--limit N]
Standard library only; reads files as text and writes nothing.
"""

import re
import sys
from pathlib import Path

LIMIT = 80


def blank_out(text):
    """Returns `text` with comments, strings and char literals replaced by spaces.

    Newlines are kept, so line numbers still hold; braces inside strings and comments no
    longer count.
    """
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif re.match(r'b?r(#*)"', text[i:i + 260]) and not _ident_before(text, i):
            m = re.match(r'b?r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "b" and text.startswith('b"', i) and not _ident_before(text, i)):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'", text[i:i + 12])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident_before(text, i):
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def matching_brace(code, open_at):
    """Index of the brace that closes the one at `open_at`."""
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def test_module_spans(code):
    """(start, end) offsets of every `#[cfg(test)] mod name { ... }`."""
    spans = []
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", code):
        open_at = m.end() - 1
        spans.append((m.start(), matching_brace(code, open_at)))
    return spans


FN_RE = re.compile(r"\bfn\s+([A-Za-z_]\w*)")


def functions(code):
    """(name, start offset, open brace offset, close brace offset) of every fn with a body."""
    found = []
    for m in FN_RE.finditer(code):
        j, paren, angle = m.end(), 0, 0
        while j < len(code):
            ch = code[j]
            if ch == "(":
                paren += 1
            elif ch == ")":
                paren -= 1
            elif ch == ";" and paren == 0:
                break  # a declaration without a body
            elif ch == "{" and paren == 0:
                found.append((m.group(1), m.start(), j, matching_brace(code, j)))
                break
            j += 1
    return found


def is_flat_dispatch(code, open_at, close_at):
    """True when the body is one `match` whose arms are each one call."""
    body = code[open_at + 1:close_at].strip()
    m = re.match(r"(?:return\s+)?(?:Ok\(\s*)?match\b[^{]*\{", body)
    if not m:
        return False
    match_open = m.end() - 1
    match_close = matching_brace(body, match_open)
    rest = body[match_close + 1:].strip()
    if rest not in ("", ";", ")", ");"):
        return False
    arms = split_arms(body[match_open + 1:match_close])
    return bool(arms) and all(is_one_call(arm) for arm in arms)


def split_arms(inner):
    """The arm expressions of a match body (the text after each `=>`), split at top-level commas."""
    arms, depth, start = [], 0, 0
    pieces = []
    for j, ch in enumerate(inner):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(inner[start:j])
            start = j + 1
    pieces.append(inner[start:])
    for piece in pieces:
        if "=>" not in piece:
            if piece.strip():
                return []
            continue
        arms.append(piece.split("=>", 1)[1].strip())
    return arms


def is_one_call(expr):
    """An expression that is one call (or a plain value): no statements, no control flow."""
    expr = expr.strip()
    if expr.startswith("{") and expr.endswith("}"):
        expr = expr[1:-1].strip()
        if expr.endswith(";"):
            expr = expr[:-1]
    if ";" in expr or re.search(r"\b(match|if|for|while|loop|let)\b", expr):
        return False
    return "{" not in expr


def line_of(code, offset):
    return code.count("\n", 0, offset) + 1


def is_product_file(path):
    return not path.name.endswith("_tests.rs") and "tests" not in path.parts[:-1]


def long_functions(src, limit):
    rows = []
    for path in sorted(src.rglob("*.rs")):
        if not is_product_file(path.relative_to(src)):
            continue
        code = blank_out(path.read_text(encoding="utf-8"))
        skip = test_module_spans(code)
        for name, start, open_at, close_at in functions(code):
            if any(a <= start <= b for a, b in skip):
                continue
            first, last = line_of(code, start), line_of(code, close_at)
            length = last - first + 1
            if length > limit and not is_flat_dispatch(code, open_at, close_at):
                rows.append((length, f"{path}:{first}", name))
    rows.sort(key=lambda r: (-r[0], r[1]))
    return rows


def main(argv):
    limit = LIMIT
    args = list(argv)
    if "--limit" in args:
        k = args.index("--limit")
        limit = int(args[k + 1])
        del args[k:k + 2]
    src = Path(args[0] if args else "src")
    cmd_files = sorted((src / "cmd").glob("*.rs"))
    cmd_lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in cmd_files)
    print(f"cmd lines: {cmd_lines} ({len(cmd_files)} files in {src / 'cmd'})")
    rows = long_functions(src, limit)
    print(f"functions over {limit} lines, not flat dispatches: {len(rows)}")
    for length, where, name in rows:
        print(f"  {length:4}  {where}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
