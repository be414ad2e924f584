#!/usr/bin/env python3
# analyze.py DIR PHASE ; PHASE in roundtrip|idle: per-thread deltas in the phase's window
import json, sys, collections
d, phase = sys.argv[1], sys.argv[2]
lines = open(f'{d}/out.txt').read().splitlines()
end = None
for l in lines:
    if (phase == "roundtrip" and "roundtrip acks" in l) or (phase == "idle" and "idle: servers" in l) or (phase == "saturated" and "saturated acks" in l) or (phase == "rate" and "rate acks" in l):
        end = float(l.split()[0])
length = float(sys.argv[3]) if len(sys.argv) > 3 else (20 if phase == 'roundtrip' else 30)
t0, t1 = end - length + 2, end - 2
snaps = collections.defaultdict(list)
for l in open(f'{d}/samples.jsonl'):
    s = json.loads(l)
    snaps[s['pid']].append(s)
def pick(lst, t):
    return min(lst, key=lambda s: abs(s['t'] - t))
tot = {}
print(f'window {t1-t0:.1f} s')
for pid, lst in snaps.items():
    if d not in lst[0]['cmd']: continue
    a, b = pick(lst, t0), pick(lst, t1)
    if abs(a['t'] - t0) > 1 or abs(b['t'] - t1) > 1: continue
    dt = b['t'] - a['t']
    role = b['role']
    at = {r[0]: r for r in a['threads']}
    rows = []
    for r in b['threads']:
        p = at.get(r[0], [r[0], r[1], 0, 0, 0, 0, 0])
        run = (r[2]-p[2])/dt/1e6; wait = (r[3]-p[3])/dt/1e6; sl = (r[4]-p[4])/dt; vol=(r[5]-p[5])/dt; nv=(r[6]-p[6])/dt
        if sl > 0: rows.append((run, r[1], wait, sl, vol, nv, (r[3]-p[3])/max(1,r[4]-p[4])/1e3))
    rows.sort(reverse=True)
    total = sum(x[0] for x in rows)
    print(f'== {role} pid {pid}: {total/10:.2f} % of a core, {sum(x[3] for x in rows):.0f} slices/s')
    for run, comm, wait, sl, vol, nv, wps in rows[:12]:
        print(f'   {comm:28s} cpu {run:7.2f} ms/s  runq-wait {wait:7.2f} ms/s  slices {sl:7.0f}/s vol {vol:6.0f}/s invol {nv:5.0f}/s  wait/slice {wps:6.1f} us')
