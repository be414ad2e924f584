#!/bin/bash
# rt.sh JAR LABEL : round-trip-heavy run with the per-thread sampler
J=$1; L=$2; mkdir -p /tmp/s9/$L
python3 /tmp/s9/sampler.py /tmp/s9/$L/samples.jsonl 150 &
SP=$!
java -jar $J multiprocess --targets tidemark --acks all --partitions 1 --runs 1 --duration 2s --latency-duration 1s --no-faults --idle 30s --profile 0 --round-trip-duration 20s --jit-warmup 5s --settle-timeout 20s --dir /tmp/s9/$L --results-dir /tmp/s9/$L/res 2>&1 | while IFS= read -r l; do echo "$(date +%s.%N) $l"; done > /tmp/s9/$L/out.txt
kill $SP; uptime >> /tmp/s9/$L/out.txt
grep -E "roundtrip acks|idle:|ISR" /tmp/s9/$L/out.txt
