#!/bin/bash
# ab.sh JAR LABEL : the brief's command, with the per-thread sampler beside it
J=$1; L=$2; mkdir -p /tmp/s9/$L
python3 /tmp/s9/sampler.py /tmp/s9/$L/samples.jsonl 170 &
SP=$!
echo "start $(uptime)" > /tmp/s9/$L/load.txt
java -jar $J multiprocess --targets tidemark --acks all --partitions 1 --runs 1 --duration 5s --latency-duration 5s --no-faults --idle 20s --profile 0 --round-trip-duration 5s --jit-warmup 5s --settle-timeout 20s --dir /tmp/s9/$L --results-dir /tmp/s9/$L/res 2>&1 | while IFS= read -r l; do echo "$(date +%s.%N) $l"; done > /tmp/s9/$L/out.txt
kill $SP; echo "end $(uptime)" >> /tmp/s9/$L/load.txt
grep -E "saturated acks|rate acks|roundtrip acks|idle:|ISR" /tmp/s9/$L/out.txt | cut -d' ' -f2- | sed "s/^/$L /"; cat /tmp/s9/$L/load.txt
