#!/bin/bash
# usage: regression-ab.sh JAR_A JAR_B TAG: the brief's regression cell, A B B A. Output under /tmp/idle-reg-TAG.
out=/tmp/idle-reg-$3; mkdir -p $out
run(){
  echo "$2$3 start: $(uptime)"
  java -jar $1 multiprocess --targets tidemark --acks all --partitions 1 --runs 1 --duration 5s \
    --latency-duration 2s --no-faults --idle 0 --profile 0 --round-trip-duration 0 --jit-warmup 5s \
    --settle-timeout 20s --results-dir $out/$2$3 2>&1 | grep -E "saturated acks|rate acks|ISR" | sed "s/^/$2$3 /"
  echo "$2$3 end: $(uptime)"
}
run $1 A 1; run $2 B 1; run $2 B 2; run $1 A 2
