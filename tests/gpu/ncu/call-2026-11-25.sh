export LD_LIBRARY_PATH=$PWD/build/devlibs
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $name"
case "$name" in *H200*) sh tests/gpu/targets.sh build 200 ;; esac
mkdir -p $OUT/ncu && OUT=$OUT/ncu sh tests/gpu/ncu/reduce-small.sh build
cd $OUT && tar czf ncu.tgz ncu && rm -rf ncu; ls
