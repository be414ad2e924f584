#!/bin/bash
run(){ java -jar $1 multiprocess --targets tidemark --acks all --partitions 1 --runs 1 --duration 2s --latency-duration 1s --no-faults --idle 20s --profile 0 --round-trip-duration 3s --jit-warmup 2s --settle-timeout 20s --results-dir /tmp/idle9b-$2-$3 2>&1 | grep -E "saturated acks|roundtrip acks|idle:|ISR" | sed "s/^/$2 /"; uptime; }
i=0
for j in A B B A; do i=$((i+1))
  if [ $j = A ]; then run /work/notes/bench-main-s9.jar A $i; else run /work/notes/bench-deep50b.jar B $i; fi
done
