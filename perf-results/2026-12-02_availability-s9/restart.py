import re,sys,glob,os
def ts(l):
    h,m,s=l[11:23].split(":"); return (int(h)*3600+int(m)*60+float(s))*1000
for r in sys.argv[1:]:
    con=open(f"/tmp/s9res/{r}/console-out.log").read()
    faults=re.findall(r"fault: SIGKILL of (.*?) \(host (\d+), restarted (.*?)\): .*?back in the ISR (\d+) ms after its restart",con)
    lines=[]
    for f in glob.glob(f"/tmp/s9res/{r}/*/hosts/*.log"):
        for l in open(f,errors="replace"):
            if l.startswith("2026"): lines.append((ts(l),os.path.basename(f),l[24:].strip()))
    lines.sort()
    seen=set()
    for what,host,when,isr in faults:
        # the restarted incarnation: next "started" line of this host after its kill
        started=[x for x in lines if f"host {host} of cluster" in x[2] and "started:" in x[2] and x[1] not in seen and x[1]!=f"host-{host}.log"]
        if not started: continue
        s=started[0]; seen.add(s[1])
        m=re.search(r"incarnation (\d+),.*in (\d+) ms \(ZooKeeper connection and registration (\d+) ms; then beside the media driver's start \((\d+) ms\) the ZooKeeper root check (\d+) ms, the media waited for until (\d+) ms; replica logs (\d+) ms\)",s[2])
        inc,total,zk,media,rootc,mediaw,logs=m.groups()
        reg=[x for x in lines if f"host {host} registered (incarnation {inc})" in x[2]]
        isrs=[x for x in lines if reg and reg[0][0]<=x[0]<=reg[0][0]+int(isr) and re.search(rf"ISR \[.*\] -> \[.*\b{host}\]",x[2]) and "asked by" in x[2]]
        restart=isrs[-1][0]-int(isr) if isrs else None
        ctor=s[0]-int(total)
        print(f"{r} host {host} {when[:8]}: back in ISR {isr} ms | JVM launch->host start {ctor-restart if restart else -1:.0f} | start {total} (ZK conn+registration {zk}, media {media}, root check {rootc}, logs {logs}) | started->registered at controller {reg[0][0]-s[0] if reg else -1:.0f} | registered->last ISR expand {isrs[-1][0]-reg[0][0] if isrs else -1:.0f}")
