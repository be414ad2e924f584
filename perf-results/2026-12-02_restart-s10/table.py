# Per run: load at start/end, saturated records/s, and each kill's pause and restart-to-ISR (python3 table.py runs/RUN...)
import re, sys, os
for run in sys.argv[1:]:
    con = open(run + "/console.txt").read() if os.path.isdir(run) else open(run + ".out").read()
    loads = re.findall(r"load average: ([0-9.]+)", con)
    sat = re.search(r"saturated acks=all partitions=1 run 1: ([0-9,]+) records/s", con)
    faults = re.findall(r"fault: SIGKILL of (a plain leader|the leader that is also the controller) \(host \d+, "
                        r"restarted (at once|after the measured window)\): acknowledgements paused (\d+) ms, restarted "
                        r"host registered and back in the ISR (-?\d+) ms", con)
    cells = " | ".join(f"{p} / {i}" for _, _, p, i in faults)
    print(f"| {run.split('/')[-1]} | {'-'.join(loads[:1] + loads[-3:-2])} | {sat.group(1) if sat else '-'} | {cells} |")
