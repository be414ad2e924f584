#!/bin/bash
# Quiet regression cell + round trip + idle: A = 8959659 (before standby and datagram wait), B = main head; A B B A
run(){ java -jar $1 multiprocess --targets tidemark --acks all --partitions 1 --runs 1 --duration 5s --latency-duration 5s --no-faults --idle 20s --profile 0 --round-trip-duration 5s --jit-warmup 5s --settle-timeout 20s --results-dir /tmp/reg9-$2-$3 2>&1 | grep -E "saturated acks|rate acks|roundtrip acks|idle:|ISR" | sed "s/^/$2 /"; uptime; }
i=0
for j in A B B A; do i=$((i+1))
  if [ $j = A ]; then run /work/notes/bench-8959659.jar A $i; else run /work/notes/bench-main-s9.jar B $i; fi
done
