#!/bin/bash
# ragged f32 MIN_BLOCKS/BATCH experiment: time each build, then verify each (correctness, check, memcheck, racecheck)
export LD_LIBRARY_PATH=$PWD/build/devlibs
export KBENCH_NO_DEFAULT_PLUGINS=1
K=build/kbench; X=build-x; R=/tmp/rx; mkdir -p $R
D="base m5b8 m5b4 m6b4 m8b2"
for d in $D; do
  timeout 40 $K --plugin-path $X/$d run $X/time.ini > $R/time-$d.txt 2>&1; echo "== $d time rc $?"
  grep -vE "stands for" $R/time-$d.txt | grep -E "point|ragged|vec16-band|cublas|copy" | cut -c1-110
done
for d in $D; do
  P="--plugin-path $X/$d"
  timeout 60 $K $P run plugins/transpose/gpu-correctness.ini -q > $R/corr-$d.txt 2>&1; c=$?
  timeout 30 $K $P check transpose > $R/check-$d.txt 2>&1; k=$?
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 $K $P run plugins/transpose/gpu-sanitize.ini -q > $R/mem-$d.txt 2>&1; m=$?
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 99 --print-limit 20 $K $P run plugins/transpose/gpu-sanitize.ini -q > $R/race-$d.txt 2>&1; r=$?
  echo "== $d verify rc corr $c check $k memcheck $m racecheck $r"
  grep -hE "^summary|SUMMARY" $R/corr-$d.txt $R/check-$d.txt $R/mem-$d.txt $R/race-$d.txt
done
tar czf $OUT/rx.tgz -C /tmp rx
