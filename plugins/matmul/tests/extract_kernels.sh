#!/bin/sh
# extract_kernels.sh SRC -- prints, for test_matmul_sim.cpp, the parts of
# matmul_kernels.cu that the host simulation runs: load4 and store4, the
# warp-tiled kernel (section "warp tiling") and the 64 x 64 warp-tile kernel
# (section "64 x 64 warp tiles"), with the kernel's dynamic shared memory
# taken from the simulation (sim_smem).  Every piece must be found: a missing
# marker fails the build rather than testing less.
set -eu
src=$1
piece() { # awk program, what
    out=$(awk "$1" "$src")
    [ -n "$out" ] || { echo "extract_kernels.sh: no $2 in $src" >&2; exit 1; }
    printf '%s\n' "$out"
}
piece '/^\/\* Four consecutive elements of row r of an M-row/,/^}$/' "load4"
piece '/^\/\* Stores four consecutive elements of row r of C/,/^}$/' "store4"
piece '/^\/\* ---- warp tiling/{on=1} /^\/\* ---- the cp.async pipeline/{on=0} on' "warp tiling section"
piece '/^\/\* ---- 64 x 64 warp tiles/{on=1} /^\/\* ---- launch helpers/{on=0} on' "64 x 64 warp tile section" |
    sed 's/extern __shared__ float4 bw_smem4\[\];/float4 *bw_smem4 = sim_smem;/'
grep -q 'extern __shared__ float4 bw_smem4\[\];' "$src" ||
    { echo "extract_kernels.sh: the shared-memory declaration of mm_bigwarp changed; update the sed above" >&2; exit 1; }
