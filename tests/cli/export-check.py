# export-check.py EXPORT.json [DIAGNOSE.json]: checks a Trace Event Format
# file written by argus export against the format's documented fields,
# and, given the diagnosis of the same trace (argus diagnose --json), that
# its culprit chain appears as flows. Prints "ok NAME" / "not ok NAME"
# lines (tests/cli/export.sh runs it).
import collections
import json
import sys

SUITE = "export"
fails = 0


def report(name, good, why=""):
    global fails
    if good:
        print("ok %s: %s" % (SUITE, name))
    else:
        fails += 1
        print("not ok %s: %s" % (SUITE, name))
        if why:
            print("  " + str(why)[:600])


doc = json.load(open(sys.argv[1]))
ev = doc.get("traceEvents")
report("a traceEvents array", isinstance(ev, list) and len(ev) > 0)
ev = ev or []

# every event: a known ph, integer pid and tid, ts a number in us
bad = [e for e in ev if e.get("ph") not in ("X", "M", "s", "f", "b", "e", "i")
       or not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int)
       or (e["ph"] != "M" and not isinstance(e.get("ts"), (int, float)))]
report("ph, pid, tid and ts of every event", not bad, bad[:3])
span_us = (max(e["ts"] for e in ev if "ts" in e) -
           min(e["ts"] for e in ev if "ts" in e)) if ev else 0
report("ts in microseconds (span %.0f us)" % span_us,
       0 < span_us < 3600e6 and min(e["ts"] for e in ev if "ts" in e) >= 0)

# X slices: a name, dur >= 0, and never overlapping on one track
tracks = collections.defaultdict(list)
badx = []
for e in ev:
    if e["ph"] == "X":
        if not e.get("name") or not isinstance(e.get("dur"), (int, float)) \
                or e["dur"] < 0:
            badx.append(e)
        tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
over = []
for k, v in tracks.items():
    v.sort()
    over += [(k, a, b) for a, b in zip(v, v[1:]) if b[0] < a[1] - 0.002]
report("slices named, dur >= 0", not badx and tracks, badx[:3])
report("slices of a track do not overlap", not over, over[:3])

# every track named "comm (tid)", every process named
tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
      if e["ph"] == "M" and e["name"] == "thread_name"}
pn = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
unnamed = [k for k in tracks if k not in tn or
           not tn[k].endswith("(%d)" % k[1]) or k[0] not in pn]
report("tracks named comm (tid) under a named process", not unnamed,
       unnamed[:5])

# flows: s and f pair up by (cat, id), one each; s bound to a slice of
# its track, f not before s and with a slice at or after it
starts = collections.defaultdict(list)
ends = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "s":
        starts[(e.get("cat"), e.get("id"))].append(e)
    elif e["ph"] == "f":
        ends[(e.get("cat"), e.get("id"))].append(e)
dangling = [k for k in ends if k not in starts] + \
    [k for k in starts if k not in ends]
dup = [k for k in starts if len(starts[k]) != 1 or len(ends.get(k, [])) != 1]
report("%d flows: every end has its start, ids unique" % len(starts),
       starts and not dangling and not dup, (dangling + dup)[:5])


def enclosed(e):
    return any(a - 0.002 <= e["ts"] <= b + 0.002
               for a, b in tracks.get((e["pid"], e["tid"]), []))


def later_slice(e):
    return any(b >= e["ts"] - 0.002
               for a, b in tracks.get((e["pid"], e["tid"]), []))


unbound = [k for k, (s,) in starts.items() if k in ends and len(ends[k]) == 1
           and (not enclosed(s) or not later_slice(ends[k][0])
                or ends[k][0]["ts"] < s["ts"])]
report("flows bind to slices, ends not before starts", not unbound,
       unbound[:5])

# async slices (hangs, culprits): b and e pair up
b = collections.Counter((e["cat"], e["id"]) for e in ev if e["ph"] == "b")
en = collections.Counter((e["cat"], e["id"]) for e in ev if e["ph"] == "e")
report("hang and culprit slices begin and end", b == en, (b - en) + (en - b))

# their stacks: arrays of frame names, "0x..." where none resolved
stk = [(e["name"], k, e["args"][k]) for e in ev
       if e["ph"] == "b" and e["cat"] in ("hang", "culprit")
       for k in ("stack", "waker_stack", "kernel_stack") if k in e["args"]]
badstk = [x for x in stk if not isinstance(x[2], list) or not x[2] or
          not all(isinstance(f, str) and f and " " not in f for f in x[2])]
report("%d stacks of hangs and culprits: arrays of names" % len(stk),
       not badstk, badstk[:3])

if len(sys.argv) > 2:
    diag = json.load(open(sys.argv[2]))
    flows = collections.Counter()
    for (cat, i), (s,) in starts.items():
        f = ends[(cat, i)][0]
        flows[(cat, s["tid"], f["tid"])] += 1
    hangs = [e for e in ev if e["ph"] == "b" and e["cat"] == "hang"]
    report("%d hangs marked" % len(hangs),
           len(hangs) == len(diag["hangs"]) and len(hangs) > 0)
    for h in diag["hangs"]:
        tid = h["thread"]["tid"]
        cul = h["culprits"]
        hb = [e for e in hangs if e["tid"] == tid]
        report("hang of %s marked with its args" % h["thread"]["comm"],
               hb and hb[0]["args"]["kind"] == h["kind"] and
               abs(hb[0]["args"]["ms"] - h["duration_ns"] / 1e6) < 1, hb[:1])
        marked = [e for e in ev if e["ph"] == "b" and e["cat"] == "culprit"
                  and e["args"]["hang"] == diag["hangs"].index(h) + 1]
        report("its %d culprits marked" % len(cul), len(marked) == len(cul)
               and len(cul) > 0)
        # the hang's stack: its last own one in the diagnosis, the
        # waker's as waker_stack
        def names(s):
            return [n if n else f for n, f in
                    zip(s.get("symbols") or [None] * len(s["frames"]),
                        s["frames"])] if s else None
        own = [s for s in h.get("stacks", []) if s["role"] == "hang" and
               s.get("kind") != "kernel"]
        wk = [s for s in h.get("stacks", []) if s["role"] == "waker"]
        if hb and (own or wk):
            report("hang of %s: its stacks as args" % h["thread"]["comm"],
                   hb[0]["args"].get("stack") == names(own[-1] if own
                                                       else None) and
                   hb[0]["args"].get("waker_stack") == names(wk[0] if wk
                                                             else None),
                   {k: hb[0]["args"].get(k) for k in ("stack",
                                                      "waker_stack")})
        for c in cul:
            held = tid if c["parent"] is None else cul[c["parent"]]["tid"]
            if held == c["tid"]:
                continue
            report("culprit %s -> %d: a culprit flow" % (c["comm"], held),
                   flows[("culprit", c["tid"], held)] > 0)
        # the hang's wake-up chain: each step's edge as a flow
        path = h["critical_path"]
        links = [(p["tid"], q["tid"], p["edge"]) for q, p in zip(path, path[1:])
                 if p["edge"] in ("wakeup", "msg", "pipe", "reply")
                 and p["tid"] < 0xfff00000 and q["tid"] < 0xfff00000
                 and p["tid"] != q["tid"]]
        missing = [l for l in links if flows[
            ("wakeup" if l[2] == "wakeup" else "message", l[0], l[1])] == 0]
        report("its wake-up chain (%s) as flows" %
               " <- ".join("%s -%s-" % (l[1], l[2]) for l in links),
               links and not missing, missing)
sys.exit(1 if fails else 0)
