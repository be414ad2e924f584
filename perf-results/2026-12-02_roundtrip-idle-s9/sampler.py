#!/usr/bin/env python3
# Snapshots of every java thread's schedstat and ctx switches, every 0.5 s, as jsonl: t, pid, tid, comm, run_ns, wait_ns, slices, vol, nonvol, cmd
import os, sys, time, json
out = open(sys.argv[1], 'w')
end = time.time() + float(sys.argv[2])
def cmd(pid):
    try:
        c = open(f'/proc/{pid}/cmdline','rb').read().split(b'\0')
        return [x.decode() for x in c]
    except Exception: return None
while time.time() < end:
    t = time.time()
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        c = cmd(pid)
        if not c or 'java' not in c[0]: continue
        role = 'other'
        s = ' '.join(c)
        if 'HostMain' in s:
            role = 'host'
            for x in c:
                if x.endswith('.properties'): role = 'host:' + os.path.basename(x)
        elif 'QuorumPeerMain' in s or 'ZooKeeper' in s or 'zookeeper' in s: role = 'zk'
        elif 'tidemark-bench' in s: role = 'bench'
        try:
            tids = os.listdir(f'/proc/{pid}/task')
        except Exception: continue
        rows = []
        for tid in tids:
            try:
                comm = open(f'/proc/{pid}/task/{tid}/comm').read().strip()
                r, w, n = open(f'/proc/{pid}/task/{tid}/schedstat').read().split()
                vol = nv = 0
                for line in open(f'/proc/{pid}/task/{tid}/status'):
                    if line.startswith('voluntary_ctxt'): vol = int(line.split()[1])
                    elif line.startswith('nonvoluntary_ctxt'): nv = int(line.split()[1])
                rows.append([int(tid), comm, int(r), int(w), int(n), vol, nv])
            except Exception: pass
        out.write(json.dumps({'t': t, 'pid': int(pid), 'role': role, 'cmd': s, 'threads': rows}) + '\n')
    out.flush()
    time.sleep(max(0, 0.5 - (time.time() - t)))
