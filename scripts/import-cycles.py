#!/usr/bin/env python3
"""File-level import cycles of a Rust crate (issue 47): which source files use which.

    scripts/import-cycles.py CRATE_SRC_DIR...     e.g. scripts/import-cycles.py app/src reports/src

Each file is a module (`lib.rs` the root, `a.rs` `a`, `a/b.rs` `a::b`). A file uses another
when it names a path into it: `crate::a::b::X`, `super::X`, `self::X`, or `child::X` for a
`mod child;` it declares (`use` lines, braces expanded, and paths in code alike); a path goes
to the longest module it names, the root when it names none. `#[cfg(test)] mod tests` at the
bottom of a file is left out (its `use super::*` is the file itself), and so are comments.
Prints every strongly connected set of two or more files (a cycle), or `no cycle`; exits 1
when there is a cycle.
"""
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def modules(src):
    """{module path (tuple): file} of a crate's src dir."""
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)[:-3].split(os.sep)
            if rel == ["lib"] or rel == ["main"]:
                out[()] = os.path.join(root, f)
            elif rel[-1] == "mod":
                out[tuple(rel[:-1])] = os.path.join(root, f)
            else:
                out[tuple(rel)] = os.path.join(root, f)
    return out


def code(path):
    """The file's code without comments, strings and char literals (they may hold `::`), and
    without its `#[cfg(test)] mod tests`."""
    text = open(path, encoding="utf-8").read()
    cut = re.search(r"#\[cfg\(test\)\]\s*mod tests\b", text)
    if cut:
        text = text[: cut.start()]
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        ident_before = i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")
        raw = re.match(r'r(#*)"', text[i:]) if c == "r" and not ident_before else None
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif raw:
            end = text.find('"' + raw.group(1), i + raw.end())
            i = n if end < 0 else end + 1 + len(raw.group(1))
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.[^']*|[^\\'])'", text[i:]):
            i += re.match(r"'(\\.[^']*|[^\\'])'", text[i:]).end()
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand(prefix, rest):
    """Paths of `prefix::rest`, where rest may start with a brace group."""
    rest = rest.strip()
    if rest.startswith("{"):
        depth, parts, cur = 0, [], ""
        for ch in rest[1:]:
            if ch == "{":
                depth += 1
            elif ch == "}":
                if depth == 0:
                    break
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        out = []
        for p in parts:
            p = p.strip()
            if not p:
                continue
            m = re.match(rf"({IDENT}(?:::{IDENT})*)(?:::(.*))?$", p, re.S)
            if not m:
                continue
            head = prefix + m.group(1).split("::")
            if m.group(2) and m.group(2).strip().startswith("{"):
                out += expand(head, m.group(2))
            else:
                out.append(head)
        return out
    m = re.match(rf"{IDENT}(?:::{IDENT})*", rest)
    return [prefix + m.group(0).split("::")] if m else [prefix]


def edges(mods):
    files = {f: m for m, f in mods.items()}
    graph = {f: set() for f in files}
    for mod, f in mods.items():
        text = code(f)
        children = [c for c in re.findall(rf"\bmod ({IDENT});", text) if mod + (c,) in mods]
        paths = []
        for m in re.finditer(rf"\b(crate|super|self)::", text):
            kind = m.group(1)
            base = {"crate": [], "super": list(mod[:-1]), "self": list(mod)}[kind]
            paths += expand(base, text[m.end():])
        for c in children:
            for m in re.finditer(rf"(?<![:\w]){c}::", text):
                paths += expand(list(mod) + [c], text[m.end():])
        for p in paths:
            target = next(
                (tuple(p[:k]) for k in range(len(p), -1, -1) if tuple(p[:k]) in mods), ()
            )
            if mods[target] != f:
                graph[f].add(mods[target])
    return graph


def cycles(graph):
    """Tarjan's strongly connected components of two or more files."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    found = False
    for src in sys.argv[1:]:
        graph = edges(modules(src))
        comps = cycles(graph)
        uses = sum(len(v) for v in graph.values())
        if not comps:
            print(f"{src}: no cycle ({len(graph)} files, {uses} file-to-file uses)")
        for comp in comps:
            found = True
            inner = [
                f"{os.path.relpath(a, src)} -> {os.path.relpath(b, src)}"
                for a in comp
                for b in sorted(graph[a])
                if b in comp
            ]
            print(f"{src}: cycle among {len(comp)} files: " + "; ".join(inner))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
