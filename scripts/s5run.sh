set -u
export OUT
bash scripts/device-session.sh tests 2>&1 | tail -12
bash scripts/device-session.sh overhead > $OUT/overhead.out 2>&1; grep -E "construct|copyto|launch |after_kernel |exit" $OUT/overhead.out | head -40
timeout 120 .gpu/root.test -test.run '^$' -test.bench 'SmallFill|HostOverhead/construct|^BenchmarkCopy$' -test.benchtime 0.3s -test.count 3 > $OUT/bench2.txt 2>&1; echo bench2 $?
grep -E "SmallFill|construct" $OUT/bench2.txt
which ncu nsys 2>&1; ls -d /usr/local/cuda*/bin 2>&1 | head -3
NCU=$(which ncu 2>/dev/null || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
  timeout 150 $NCU -k regex:random_normal --launch-skip 1 --launch-count 1 --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats --section Occupancy .gpu/root.test -test.run '^$' -test.bench 'ArrayBandwidth/randn' -test.benchtime 3x > $OUT/ncu.txt 2>&1; echo ncu $?
  grep -v "^==PROF==" $OUT/ncu.txt | grep -E "Issue|Eligible|Stall|Warp Cycles|Pipe|Occupancy|Active Warps|Executed Ipc|Issued|No Eligible|One or More|Registers" | head -40
fi
