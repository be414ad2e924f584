import re,sys,glob,os
runs=sys.argv[1:]
names=["plain leader, restarted at once","plain leader, kept down","leader+controller, restarted at once","leader+controller, kept down","ZooKeeper restart"]
rows={}
for r in runs:
    con=open(f"/tmp/s9res/{r}/console-out.log").read()
    pauses=[int(x) for x in re.findall(r"acknowledgements paused (\d+) ms",con)]
    isr=[int(x) for x in re.findall(r"back in the ISR (\d+) ms",con)]
    failed=re.findall(r"(\d+) failed",con)
    load=open(f"/tmp/s9res/{r}/load.txt").read().split("\n")[0]
    rows[r]=(pauses,isr,failed,load)
    print(r,load,"pauses",pauses,"isr",isr,"failed",failed)
    # controller timelines
    logs=glob.glob(f"/tmp/s9res/{r}/*/hosts/*.log")
    lines=[]
    for f in logs:
        for l in open(f,errors="replace"):
            if l.startswith("2026") and re.search(r"deposed the controller|is the controller|exited: its liveness|session expired|\(election\)",l):
                lines.append(l[11:23]+" "+os.path.basename(f)+" "+l[24:].strip()[:150])
    lines.sort()
    for l in lines:
        if "is the controller" in l or "deposed" in l: print("   ",l)
