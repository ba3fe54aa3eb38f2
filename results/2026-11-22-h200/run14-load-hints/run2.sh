#!/bin/bash
# load-hint experiment: each build timed twice, interleaved, then verified
export LD_LIBRARY_PATH=$PWD/build/devlibs
export KBENCH_NO_DEFAULT_PLUGINS=1
K=build/kbench; X=build-x; R=/tmp/ry; mkdir -p $R
D="base l2p256 na256 l2p128"
for d in $D; do echo "$d SASS: $(cuobjdump -sass $X/$d/kbench-transpose.so 2>/dev/null | grep -oE "LDG\.E[A-Z0-9_.]*" | sort | uniq -c | sort -rn | head -3 | tr "\n" " ")"; done
for pass in 1 2; do
for d in $D; do
  timeout 60 $K --plugin-path $X/$d run $X/time2.ini -o $R/time-$d-$pass > $R/time-$d-$pass.txt 2>&1; echo "== $d pass $pass rc $?"
  grep -vE "stands for" $R/time-$d-$pass.txt | grep -E "^h-|vec16-band|ragged|cublas|copy" | cut -c1-62
done
done
for d in $D; do
  P="--plugin-path $X/$d"
  timeout 60 $K $P run plugins/transpose/gpu-correctness.ini -q > $R/corr-$d.txt 2>&1; c=$?
  timeout 30 $K $P check transpose > $R/check-$d.txt 2>&1; k=$?
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 $K $P run plugins/transpose/gpu-sanitize.ini -q > $R/mem-$d.txt 2>&1; m=$?
  echo "== $d verify rc corr $c check $k memcheck $m"
  grep -hE "^summary|SUMMARY" $R/corr-$d.txt $R/check-$d.txt $R/mem-$d.txt
done
rm -f $R/*/results.json
tar czf $OUT/ry.tgz -C /tmp ry
