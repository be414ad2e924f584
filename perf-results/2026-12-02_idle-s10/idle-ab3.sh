#!/bin/bash
# usage: idle-ab3.sh JAR_A JAR_B TAG [IDLE_S]: the multiprocess bench's short cell, A B B A, with each run's idle
# window also sampled per thread (threads.py, the middle IDLE_S-8 s of it). Output under /tmp/idle-ab-TAG.
here=$(cd "$(dirname "$0")" && pwd)
idle=${4:-20}
out=/tmp/idle-ab-$3; mkdir -p $out
run(){ # jar label n
  d=$out/$2$3; rm -rf $d; mkdir -p $d
  echo "$2$3 start: $(uptime)"
  java -jar $1 multiprocess --targets tidemark --acks all --partitions 1 --runs 1 --duration 2s \
    --latency-duration 1s --no-faults --idle ${idle}s --profile 0 --round-trip-duration 5s --jit-warmup 0 \
    --settle-timeout 20s --dir $d/c --results-dir $d/res > $d/bench.log 2>&1 &
  bench=$!
  python3 $here/threads.py $d/bench.log $d/c $((idle - 8)) $d/threads.txt &
  sampler=$!
  wait $bench; kill $sampler 2>/dev/null; wait $sampler 2>/dev/null
  grep -E "saturated acks|roundtrip|round trip|idle:|ISR" $d/bench.log | sed "s/^/$2$3 /"
  grep -E "^(host|zoo|all)|tidemark-host" $d/threads.txt 2>/dev/null | sed "s/^/$2$3   /"
  echo "$2$3 end: $(uptime)"
}
run $1 A 1; run $2 B 1; run $2 B 2; run $1 A 2
