import re,sys,glob,os
def ts(l):
    h,m,s=l[11:23].split(":"); return (int(h)*3600+int(m)*60+float(s))*1000
for r in sys.argv[1:]:
    lines=[]
    for f in glob.glob(f"/tmp/failover-runs/{r}/*/hosts/*.log"):
        for l in open(f,errors="replace"):
            if l.startswith("2026"): lines.append((ts(l),os.path.basename(f),l[24:].strip()))
    lines.sort()
    con=open(f"/tmp/failover-runs/{r}/console.log").read()
    faults=re.findall(r"fault: SIGKILL of the leader that is also the controller \(host (\d+).*?paused (\d+) ms.*?partition (\d+): leader",con)
    for host,pause,part in faults:
        dep=[x for x in lines if re.search(f"deposed the controller on host {host}: its process exited",x[2])]
        for d in dep[:1]:
            exits=[x for x in lines if x[0]<=d[0] and x[0]>d[0]-3000 and f"the process of host {host} (" in x[2]]
            ready=[x for x in lines if x[0]>=d[0] and "is the controller" in x[2]][:1]
            el=[x for x in lines if x[0]>=d[0] and ("(election)" in x[2] or "died)" in x[2])]
            meas=[x for x in el if f"Controller: faults-{part}:" in x[2]][:1]
            e0=exits[0][0] if exits else None
            rd=ready[0] if ready else None
            m=re.search(r"in (\d+) ms\)",rd[2]) if rd else None
            print(f"{r} host{host} pause {pause}: exit->depose {d[0]-e0:.0f}  depose->ready {rd[0]-d[0]:.0f} (store {m.group(1) if m else '?'})  ready->1st election {el[0][0]-rd[0]:.0f}  ready->measured {meas[0][0]-rd[0] if meas else -1:.0f}  exit->measured {meas[0][0]-e0 if meas else -1:.0f}")
