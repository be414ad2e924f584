# A restarted host's timeline from a fault-phase run's console and host logs (session 9's restart.py, for this
# directory's runs): python3 restart.py runs/RUN...  (RUN holds console.txt and hosts/*.log)
import re, sys, glob, os

def ts(line):
    h, m, s = line[11:23].split(":")
    return (int(h) * 3600 + int(m) * 60 + float(s)) * 1000

for run in sys.argv[1:]:
    con = open(run + "/console.txt").read() if os.path.isdir(run) else open(run + ".out").read()
    faults = re.findall(r"fault: SIGKILL of (.*?) \(host (\d+), restarted (.*?)\): .*?back in the ISR (\d+) ms after "
                        r"its restart", con)
    lines = []
    for f in glob.glob(run + "/*/hosts/*.log") + glob.glob(run + "/hosts/*.log"):
        for l in open(f, errors="replace"):
            if l.startswith("2026"):
                lines.append((ts(l), os.path.basename(f), l[24:].strip()))
    lines.sort()
    seen = set()
    for what, host, when, isr in faults:
        started = [x for x in lines if f"host {host} of cluster" in x[2] and "started:" in x[2] and x[1] not in seen
                   and x[1] != f"host-{host}.log"]
        if not started:
            continue
        s = started[0]
        seen.add(s[1])
        m = re.search(r"incarnation (\d+),.*in (\d+) ms \(ZooKeeper connection and registration (\d+) ms; then beside "
                      r"the media driver's start \((\d+) ms\) the ZooKeeper root check (\d+) ms, the media waited for "
                      r"until (\d+) ms; replica logs (\d+) ms\)", s[2])
        inc, total, zk, media, rootc, mediaw, logs = m.groups()
        opens = [x for x in lines if x[1] == s[1] and "RecoveryReport" in x[2]]
        loader = sum(float(re.search(r"durationMs=([0-9.]+)", x[2]).group(1)) for x in opens)
        reg = [x for x in lines if f"host {host} registered (incarnation {inc})" in x[2]]
        isrs = [x for x in lines if reg and reg[0][0] <= x[0] <= reg[0][0] + int(isr) and
                re.search(rf"ISR \[.*\] -> \[.*\b{host}\]", x[2]) and "asked by" in x[2]]
        restart = isrs[-1][0] - int(isr) if isrs else None
        ctor = s[0] - int(total)
        print(f"{os.path.basename(run)} host {host} {when[:8]}: back in ISR {isr} ms | JVM launch->host start "
              f"{ctor - restart if restart else -1:.0f} | start {total} (ZK conn+registration {zk}, media {media}, "
              f"root check {rootc}, logs {logs}, of which loaders {loader:.0f}) | started->registered "
              f"{reg[0][0] - s[0] if reg else -1:.0f} | registered->last ISR expand "
              f"{isrs[-1][0] - reg[0][0] if isrs else -1:.0f}")
