#!/bin/bash
# transpose_fast.cu's 16-byte loads with L2 prefetch-size / L1 hints, one plugin build each
set -e
cd /work/wt/exp
F=plugins/transpose/transpose_fast.cu
git checkout -q plugins/transpose
mkdir -p /work/main/build-x
for c in "l2p256:ld.global.nc.L2::256B.v4.u32" "na256:ld.global.nc.L1::no_allocate.L2::256B.v4.u32" "l2p128:ld.global.nc.L2::128B.v4.u32"; do
  name=${c%%:*}; ins=${c#*:}
  git checkout -q $F
  python3 - "$F" "$ins" <<'PY'
import sys
p,ins=sys.argv[1],sys.argv[2]
s=open(p).read()
old="        return __ldg(reinterpret_cast<const uint4 *>(p));"
assert old in s
new=('        uint4 v;\n'
     '        asm("%s {%%0, %%1, %%2, %%3}, [%%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));\n'
     '        return v;') % ins
s=s.replace(old,new,1)
open(p,'w').write(s)
PY
  cmake --build build --target kbench_transpose_plugin > /tmp/exp2-$name.log 2>&1 || { echo "build $name failed"; tail -20 /tmp/exp2-$name.log; exit 1; }
  mkdir -p /work/main/build-x/$name && cp build/plugins/kbench-transpose.so /work/main/build-x/$name/
  echo built $name
done
git checkout -q plugins/transpose
