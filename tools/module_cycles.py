#!/usr/bin/env python3
"""Find module cycles in a Rust crate from its `crate::` and `super::` paths.

    python3 tools/module_cycles.py crates/relis/src
    python3 tools/module_cycles.py crates/relis-server/src --among cmd,acl,client

A node is a top-level module (`store` for store.rs) or, where the top-level module is a
folder, one level deeper (`types::zset` for types/zset.rs or types/zset/*.rs; the folder's own
mod.rs is the node `types`). An edge a -> b is any `crate::...` or `super::...` path in a's
files that names b. Not counted: the crate root (lib.rs/main.rs re-export everything), edges
between a folder's mod.rs and its own children (the folder module is their facade, e.g. a
registry of its children), and `#[cfg(test)]` inline modules (test code may use the whole
crate). Prints each cycle (strongly connected component) with one path and the lines that
make its edges; exits 1 if any cycle is found (with --among: only cycles holding two of the
named modules, a name matching itself and its children), else 0. No dependencies.
"""

import argparse
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip_comments(text):
    """Blanks comments and string/char literals, keeping line numbers."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
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
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}') or a lifetime ('a): only blank the former.
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                out.append("' '")
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_test_modules(text):
    """Blanks `#[cfg(test)] mod name { ... }` blocks, keeping line numbers."""
    pat = re.compile(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{")
    while True:
        m = pat.search(text)
        if not m:
            return text
        depth, j = 1, m.end()
        while j < len(text) and depth:
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
            j += 1
        text = text[: m.start()] + "\n" * text.count("\n", m.start(), j) + text[j:]


def parse_tree(text, i):
    """Parses a path tree after `crate::` at i: returns (list of segment lists, end index)."""
    paths = []
    segs = []
    n = len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i < n and text[i] == "{":
            i += 1
            while True:
                sub, i = parse_tree(text, i)
                paths.extend(segs + s for s in sub)
                while i < n and text[i] in " \t\r\n":
                    i += 1
                if i < n and text[i] == ",":
                    i += 1
                    while i < n and text[i] in " \t\r\n":
                        i += 1
                    if i < n and text[i] == "}":
                        i += 1
                        return paths, i
                    continue
                if i < n and text[i] == "}":
                    i += 1
                return paths, i
        m = IDENT.match(text, i)
        if not m:
            break
        segs.append(m.group(0))
        i = m.end()
        if text.startswith("::", i):
            i += 2
            continue
        break
    paths.append(segs)
    return paths, i


class Crate:
    def __init__(self, root):
        self.root = root
        self.files = {}  # module path (tuple) -> file
        for dirpath, _, names in os.walk(root):
            for name in names:
                if not name.endswith(".rs"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                parts = rel[:-3].split(os.sep)
                if parts[-1] == "mod":
                    parts = parts[:-1]
                if parts in (["lib"], ["main"]) or parts and parts[0] == "bin":
                    parts = []
                self.files.setdefault(tuple(parts), os.path.join(dirpath, name))
        self.modules = set(self.files)
        # Folder modules: a top-level module with files below it.
        self.folders = {p[0] for p in self.modules if len(p) > 1}

    def is_module(self, path):
        return tuple(path) in self.modules

    def node(self, path):
        """The node a module path belongs to, or None for the crate root."""
        if not path:
            return None
        top = path[0]
        if top in self.folders and len(path) > 1:
            return top + "::" + path[1]
        return top

    def target(self, segs):
        """The module path a `crate::` path names (its longest module prefix)."""
        best = []
        for k in range(1, len(segs) + 1):
            if self.is_module(segs[:k]):
                best = segs[:k]
        return best

    def edges(self):
        edges = {}  # (a, b) -> [(file, line, text)]
        for mod, path in sorted(self.files.items()):
            src = self.node(list(mod))
            if src is None:
                continue
            with open(path, encoding="utf-8") as f:
                raw = f.read()
            lines = raw.split("\n")
            text = strip_test_modules(strip_comments(raw))
            for m in re.finditer(r"(?<![A-Za-z0-9_$])(crate|super)::", text):
                paths, _ = parse_tree(text, m.end())
                base = []
                if m.group(1) == "super":
                    # A file's own module is `mod`; super is its parent; more supers climb.
                    base = list(mod[:-1])
                    j = m.end()
                    while text.startswith("super::", j):
                        base = base[:-1]
                        j += len("super::")
                    paths, _ = parse_tree(text, j)
                for segs in paths:
                    segs = [s for s in segs if s != "self"]
                    dst = self.node(self.target(base + segs))
                    if dst is None or dst == src:
                        continue
                    # A folder's mod.rs and its own children are one unit.
                    if dst.split("::")[0] == src.split("::")[0] and ("::" not in src or "::" not in dst):
                        continue
                    line = text.count("\n", 0, m.start()) + 1
                    edges.setdefault((src, dst), []).append((path, line, lines[line - 1].strip()))
        return edges


def sccs(nodes, adj):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(adj.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(adj.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return out


def a_cycle(comp, adj):
    """One simple cycle through the component's first node (breadth-first)."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(adj.get(v, ())):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", help="the crate's src directory")
    ap.add_argument("--among", help="comma-separated modules: fail only on cycles holding two of them")
    ap.add_argument("--edges", action="store_true", help="print every edge too")
    args = ap.parse_args()
    crate = Crate(args.src)
    edges = crate.edges()
    adj = {}
    nodes = {crate.node(list(m)) for m in crate.modules} - {None}
    for a, b in edges:
        adj.setdefault(a, set()).add(b)
    if args.edges:
        for (a, b), where in sorted(edges.items()):
            print(f"{a} -> {b}  ({os.path.relpath(where[0][0])}:{where[0][1]})")
    among = [s.strip() for s in args.among.split(",")] if args.among else None

    def named(node):
        return {a for a in among if node == a or node.startswith(a + "::")}

    failing = 0
    for comp in sccs(nodes, adj):
        bad = among is None or len(set().union(*(named(n) for n in comp))) >= 2
        failing += bad
        print(("cycle" if bad else "cycle (allowed)") + f" among {len(comp)} modules: {', '.join(comp)}")
        cyc = a_cycle(comp, adj)
        print("  e.g. " + " -> ".join(cyc))
        for a, b in zip(cyc, cyc[1:]):
            f, line, txt = edges[(a, b)][0]
            print(f"    {a} -> {b}: {os.path.relpath(f)}:{line}: {txt}")
    if failing:
        print(f"{failing} module cycle(s) in {args.src}", file=sys.stderr)
        return 1
    print(f"no module cycles in {args.src}" + (f" among {args.among}" if among else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
