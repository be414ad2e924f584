#!/usr/bin/env python3
"""Table of an idle-ab3.sh output directory: usage table.py /tmp/idle-ab-TAG"""
import os, re, sys
d = sys.argv[1]
print('| run | load at start | saturated records/s | round trip p50 / p99 ms | idle % (bench, 20 s) | sampled % | sampled % without JIT | duty threads ms/s (wake-ups/s), 3 hosts | controller threads ms/s | ZooKeeper JVM ms/s |')
print('|---|---|---:|---|---:|---:|---:|---|---:|---:|')
for run in ['A1', 'B1', 'B2', 'A2']:
    p = os.path.join(d, run)
    if not os.path.exists(os.path.join(p, 'threads.txt')): continue
    log = open(os.path.join(p, 'bench.log')).read()
    sat = re.search(r'saturated acks=all partitions=1 run 1: ([\d,]+) records/s', log)
    rt = re.search(r'roundtrip .*?p50 ([\d.]+) ms, p99 ([\d.]+) ms', log)
    idle = re.search(r'idle: servers together ([\d.]+)%', log)
    load = ''
    tot = jit = duty = dutyw = ctl = zk = 0.0
    role = None
    for line in open(os.path.join(p, 'threads.txt')):
        m = re.match(r'(host-\d|zookeeper|other): ([\d.]+) ms/s', line)
        if m:
            role = m.group(1)
            if role != 'other': tot += float(m.group(2))
            if role == 'zookeeper': zk = float(m.group(2))
            continue
        m = re.match(r'\s+(.+?)\s+([\d.]+) ms/s\s+([\d.]+) wake-ups/s', line)
        if m and role and role != 'other':
            n, c, w = m.group(1), float(m.group(2)), float(m.group(3))
            if 'CompilerThre' in n: jit += c
            if n.startswith('tidemark-host'): duty += c; dutyw += w
            if n.startswith('tidemark-contro'): ctl += c
    print(f"| {run} | | {sat.group(1) if sat else '-'} | {rt.group(1) + ' / ' + rt.group(2) if rt else '-'} | {idle.group(1) if idle else '-'} | {tot/10:.2f} | {(tot-jit)/10:.2f} | {duty:.1f} ({dutyw:.0f}) | {ctl:.1f} | {zk:.1f} |")
