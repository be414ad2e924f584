#!/bin/bash
# run.sh JAR SEGBYTES RECORDS DIR TAG
JAR=$1; SEG=$2; N=$3; DIR=$4; TAG=$5; O=/tmp/s8/probe/$TAG
java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -cp $JAR /tmp/s8/probe/RollProbe.java $SEG $N $DIR > $O.out 2>&1 &
PID=$!
for i in $(seq 1 600); do grep -q "^tid" $O.out 2>/dev/null && break; sleep 0.1; done
TID=$(awk '/^tid/ {print $2}' $O.out)
perf stat --per-thread -e task-clock,syscalls:sys_enter_pwrite64,syscalls:sys_enter_msync,exceptions:page_fault_user,context-switches -p $PID -o $O.stat >/dev/null 2>&1 &
SP=$!
wait $PID; sleep 0.5; kill -INT $SP 2>/dev/null; wait $SP 2>/dev/null
W=$(grep -E -- "-$TID " $O.stat | awk '{printf "%s=%s ", $3, $2}')
AG=$(grep -E "tidemark-log" $O.stat | awk '{printf "%s=%s ", $3, $2}')
echo "$TAG load=$(cut -d' ' -f1 /proc/loadavg) $(grep records $O.out)"
echo "   writer: $W"
echo "   agent:  $AG"
