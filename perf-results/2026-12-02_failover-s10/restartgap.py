import re,sys,glob,os
def ts(l):
    h,m,s=l[11:23].split(":"); return (int(h)*3600+int(m)*60+float(s))*1000
for d in sys.argv[1:]:
    con=open(glob.glob(d+"/console*.log")[0]).read()
    lines=[]
    for f in glob.glob(d+"/**/hosts/*.log",recursive=True):
        for l in open(f,errors="replace"):
            if l.startswith("2026"): lines.append((ts(l),os.path.basename(f),l[24:].strip()))
    lines.sort()
    for host,isr,pause in re.findall(r"fault: SIGKILL of the leader that is also the controller \(host (\d+), restarted at once\): acknowledgements paused (\d+) ms, restarted host registered and back in the ISR (\d+) ms",con) and [(h,i,p) for h,p,i in re.findall(r"fault: SIGKILL of the leader that is also the controller \(host (\d+), restarted at once\): acknowledgements paused (\d+) ms, restarted host registered and back in the ISR (\d+) ms",con)]:
        dep=[x for x in lines if f"deposed the controller on host {host}: its process exited" in x[2]][:1]
        if not dep: continue
        d0=dep[0][0]
        exits=[x for x in lines if d0-3000<x[0]<=d0 and f"the process of host {host} (" in x[2]]
        ready=[x for x in lines if x[0]>=d0 and "is the controller" in x[2]][0]
        el=[x for x in lines if x[0]>=ready[0] and ("(election)" in x[2] or "died)" in x[2])][0]
        started=[x for x in lines if x[0]>d0 and f"host {host} of cluster" in x[2] and "started:" in x[2]][0]
        total=int(re.search(r"in (\d+) ms",started[2]).group(1))
        ctor=started[0]-total
        reg=[x for x in lines if x[0]>d0 and f"host {host} registered (incarnation" in x[2]][0]
        isrs=[x for x in lines if reg[0]<=x[0]<=reg[0]+int(isr) and re.search(rf"ISR \[.*\] -> \[.*\b{host}\]",x[2]) and "asked by" in x[2]]
        restart=isrs[-1][0]-int(isr) if isrs else None
        e0=exits[0][0] if exits else d0
        print(f"{os.path.basename(d.rstrip('/'))} host{host} pause {pause}: exit seen at 0; restart {restart-e0 if restart else float('nan'):.0f}; ready {ready[0]-e0:.0f}; 1st election written {el[0]-e0:.0f} (ready->election {el[0]-ready[0]:.0f}); restarted JVM's host constructor {ctor-e0:.0f}")
