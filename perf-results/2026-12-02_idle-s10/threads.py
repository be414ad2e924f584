#!/usr/bin/env python3
"""Per-thread CPU and wake-ups of one bench run's server JVMs over a window of its idle phase.

usage: threads.py BENCH_LOG DIR_MARK WINDOW_S OUT
Waits for BENCH_LOG to say "idle for", waits 5 s more, then reads /proc/<pid>/task/*/schedstat (CPU ns, slices)
and status (context switches) of every JVM whose command line contains DIR_MARK, twice, WINDOW_S apart, and
writes per process and thread (threads of one name summed): CPU ms/s and wake-ups (voluntary switches)/s."""
import os, re, sys, time, collections
log, mark, window, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
while 'idle for' not in open(log).read():
    time.sleep(0.5)
time.sleep(5)
def role(cmd):
    if 'ZooKeeperServerMain' in cmd or 'QuorumPeerMain' in cmd: return 'zookeeper'
    m = re.search(r'host-(\d+)', cmd)
    return 'host-' + m.group(1) if m else 'other'
def snap():
    res = {}
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try:
            cmd = open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\0', b' ').decode()
        except OSError: continue
        if mark not in cmd or 'java' not in cmd.split(' ')[0] or 'tidemark-bench.jar multiprocess' in cmd: continue
        for tid in os.listdir(f'/proc/{pid}/task'):
            try:
                comm = open(f'/proc/{pid}/task/{tid}/comm').read().strip()
                run, _, slices = open(f'/proc/{pid}/task/{tid}/schedstat').read().split()
                vol = 0
                for line in open(f'/proc/{pid}/task/{tid}/status'):
                    if line.startswith('voluntary_ctxt'): vol = int(line.split()[1])
                res[(pid, tid)] = (role(cmd), comm, int(run), vol)
            except OSError: pass
    return res
a = snap(); t0 = time.time(); time.sleep(window); b = snap(); dt = time.time() - t0
agg = collections.defaultdict(lambda: [0.0, 0.0])
for k, (r, comm, run, vol) in b.items():
    ra, va = (a[k][2], a[k][3]) if k in a else (0, 0)
    name = re.sub(r'\d+$', 'N', comm)
    agg[(r, name)][0] += (run - ra) / 1e6 / dt
    agg[(r, name)][1] += (vol - va) / dt
with open(out, 'w') as f:
    f.write(f'window {dt:.1f} s; CPU ms/s (1 ms/s = 0.1 % of one core), wake-ups = voluntary switches/s\n')
    tot = 0
    jit = 0
    for r in sorted({r for r, _ in agg}):
        rows = sorted(((v[0], v[1], n) for (rr, n), v in agg.items() if rr == r), reverse=True)
        s = sum(x[0] for x in rows); tot += s if r != 'other' else 0
        jit += sum(x[0] for x in rows if 'CompilerThre' in x[2]) if r != 'other' else 0
        f.write(f'\n{r}: {s:.2f} ms/s ({s/10:.2f} % of one core)\n')
        for cpu, wk, n in rows:
            if cpu >= 0.05 or wk >= 1: f.write(f'  {n:<24} {cpu:7.2f} ms/s {wk:7.1f} wake-ups/s\n')
    f.write(f'\nall but other (the bench JVM): {tot:.2f} ms/s ({tot/10:.2f} % of one core)\n')
    f.write(f'all but other, without the JIT compilers: {tot - jit:.2f} ms/s ({(tot - jit)/10:.2f} % of one core)\n')
