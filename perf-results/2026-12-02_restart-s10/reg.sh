#!/bin/bash
n=$1; jar=$2
{ echo "start $(date -u +%T) $(uptime)"; java -jar $jar multiprocess --targets tidemark --acks all --partitions 1 --runs 1 --duration 5s --latency-duration 2s --no-faults --idle 0 --profile 0 --round-trip-duration 0 --jit-warmup 5s --settle-timeout 20s --results-dir /tmp/restart-runs/$n; echo "end $(date -u +%T) $(uptime)"; } > /tmp/restart-runs/$n.out 2>&1
