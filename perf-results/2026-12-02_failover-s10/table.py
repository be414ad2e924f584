import re,sys
for r in sys.argv[1:]:
    con=open(f"/tmp/failover-runs/{r}/console.log").read()
    pauses=[int(x) for x in re.findall(r"acknowledgements paused (\d+) ms",con)]
    failed=[int(x) for x in re.findall(r"(\d+) failed",con)]
    load=open(f"/tmp/failover-runs/{r}/load.txt").read().split("\n")
    sat=re.findall(r"saturated acks=all partitions=1 run 1: ([\d,]+) records/s",con)
    print(r, "pauses", pauses, "failed", sum(failed), "sat", sat, "| load", load[0].split()[2], "->", load[1].split()[2] if len(load)>1 and load[1] else "?")
