#!/bin/bash
# usage: run.sh LABEL JAR
label=$1; jar=$2
out=/tmp/failover-runs/$label
mkdir -p $out
echo "start $(date -u +%T) $(cat /proc/loadavg)" > $out/load.txt
java -jar $jar multiprocess --targets tidemark --acks all --partitions 1 --runs 1 --duration 5s \
  --latency-duration 2s --idle 0 --profile 0 --round-trip-duration 0 --jit-warmup 5s --settle-timeout 20s \
  --results-dir $out > $out/console.log 2>&1
echo "end $(date -u +%T) $(cat /proc/loadavg)" >> $out/load.txt
