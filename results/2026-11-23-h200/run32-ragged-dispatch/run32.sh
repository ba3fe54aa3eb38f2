#!/bin/sh
# review mend: ragged's full/edge choice made in the tile code (new) against f8c965d (tr-f8c), interleaved; transpose gpu.sh on new
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r32; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
for rep in 1 2 3; do
for b in new tr-f8c; do
  if [ $b = new ]; then timeout 60 build/kbench run tests/gpu/scratch/tr-time.ini -q > $R/t$rep-$b.txt 2>&1
  else KBENCH_NO_DEFAULT_PLUGINS=1 timeout 60 build/kbench --plugin-path build-x/$b run tests/gpu/scratch/tr-time.ini -q > $R/t$rep-$b.txt 2>&1; fi
  el "t $rep $b rc=$?"
done; done
for f in $R/t*-*.txt; do echo "$f: $(grep -E '^  ragged' $f | awk '{print $4}' | tr '\n' ' ')"; done
OUT2=$OUT; OUT=$R timeout 200 sh plugins/transpose/gpu.sh build > $R/tr-gpu-sh.txt 2>&1; el "tr gpu.sh rc=$?"; OUT=$OUT2
tail -9 $R/tr-gpu-sh.txt
tar czf $OUT/r32.tgz -C /tmp r32
