set -u
timeout 150 /usr/local/cuda/bin/ncu -k regex:random_normal --launch-skip 1 --launch-count 1 --section WarpStateStats --page raw .gpu/root.test -test.run '^$' -test.bench 'ArrayBandwidth/randn' -test.benchtime 3x > $OUT/ncu2.txt 2>&1; echo ncu $?
grep -E "issue_stalled|warps_issue_stalled" $OUT/ncu2.txt | grep -v "not_issued" | sort -k3 -n -r | head -30
timeout 150 .gpu/root.test -test.run '^$' -test.bench '^BenchmarkCopy$/(HtoD|DtoH)/pageable/(2|8)MB' -test.benchtime 0.3s -test.count 3 > $OUT/copy8.txt 2>&1; echo copy $?
grep -E "^Benchmark" $OUT/copy8.txt
