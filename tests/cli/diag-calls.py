#!/usr/bin/env python3
"""diag-calls.py: the diagnosis files (engine/diag*.c) as a pipeline of
stages, checked: which file calls which (a call of a function another
file defines, not static), and whether any files call each other in a
circle. Prints one line per circle found ("circle: a.c b.c ...") and
the order of the files, lowest stage first; exits 1 when there is a
circle."""
import glob
import re
import sys


def strip(src):
    src = re.sub(r'/\*.*?\*/', '', src, flags=re.S)
    return re.sub(r'"(\\.|[^"\\])*"', '""', src)


def main():
    files = sorted(glob.glob(sys.argv[1] if len(sys.argv) > 1 else
                             'engine/diag*.c'))
    defs = {}
    text = {}
    for f in files:
        src = open(f).read()
        lines = src.split('\n')
        for i, line in enumerate(lines):
            m = re.match(r'^([a-z_][a-z0-9_]*)\(', line)
            if m and i > 0 and not lines[i - 1].startswith('static'):
                defs[m.group(1)] = f
        text[f] = strip(src)
    calls = {f: set() for f in files}
    for f in files:
        for name, where in defs.items():
            if where != f and re.search(r'\b' + name + r'\s*\(', text[f]):
                calls[f].add(where)
    # strongly connected components (Tarjan), iteratively small enough
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(calls[v]):
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
            comps.append(comp)

    for f in files:
        if f not in index:
            visit(f)
    bad = [c for c in comps if len(c) > 1]
    for c in bad:
        print('circle: ' + ' '.join(sorted(c)))
    # Tarjan emits components callees first: the stages, lowest first
    print('order: ' + ' '.join(c[0].split('/')[-1] for c in comps))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
