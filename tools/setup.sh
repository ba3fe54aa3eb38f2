#!/bin/sh
# Sets up a kbench build on a Debian or Ubuntu machine with the CUDA toolkit:
# installs the missing Debian packages (when run as root, or through sudo),
# then configures and builds into build/ (or $KBENCH_BUILD_DIR).  Safe to run
# again: it only does what is missing, and a rebuild is incremental.
set -eu

cd "$(dirname "$0")/.."
build=${KBENCH_BUILD_DIR:-build}
# apt-get that waits (bounded) while another package manager holds the lock.
aptw="$PWD/tools/apt-get-wait"

# The packages kbench builds against, and the commands that tell they are there.
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in cmake ninja-build pkg-config libinih-dev libcriterion-dev libjansson-dev libsqlite3-dev; do
    have_pkg "$p" || need="$need $p"
done
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
        echo "kbench setup: missing Debian packages:$need; install them as root (apt-get install$need) and run this again." >&2
        exit 2
    fi
    echo "kbench setup: installing$need" >&2
    $sudo "$aptw" update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo "$aptw" install -y -qq $need >&2
fi

# gnuplot draws the plots of `kbench plot`; it is optional (kbench writes the
# scripts without it), so a machine without a package mirror still builds.
if ! command -v gnuplot >/dev/null 2>&1 && ! have_pkg gnuplot-nox; then
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo=none; fi
    if [ "$sudo" != none ] && DEBIAN_FRONTEND=noninteractive $sudo "$aptw" install -y -qq gnuplot-nox >&2 2>/dev/null; then
        echo "kbench setup: installed gnuplot-nox (for kbench plot)" >&2
    else
        echo "kbench setup: gnuplot is not installed and could not be (optional: kbench plot then writes only the scripts; apt-get install gnuplot-nox adds it)." >&2
    fi
fi

# python3-jsonschema checks every results.json the tests write against
# docs/results.schema.json (the test schema, which skips without it);
# optional, like gnuplot.
if ! have_pkg python3-jsonschema; then
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo=none; fi
    if [ "$sudo" != none ] && DEBIAN_FRONTEND=noninteractive $sudo "$aptw" install -y -qq --no-install-recommends python3-jsonschema >&2 2>/dev/null; then
        echo "kbench setup: installed python3-jsonschema (for the test schema)" >&2
    else
        echo "kbench setup: python3-jsonschema could not be installed (optional: the test schema then skips; apt-get install python3-jsonschema adds it)." >&2
    fi
fi

# Chromium opens the page of `kbench report` in its browser test (test_html,
# headless); it is optional (the test skips, saying why, without it), so a
# failed install does not stop setup.  KBENCH_SETUP_BROWSER=0 leaves it out.
if [ "${KBENCH_SETUP_BROWSER:-1}" != 0 ] && ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo=none; fi
    install_browser() {
        DEBIAN_FRONTEND=noninteractive $sudo "$aptw" install -y -qq --no-install-recommends chromium >&2 2>/dev/null
    }
    if [ "$sudo" != none ] && { install_browser || { $sudo "$aptw" update -qq >&2 2>/dev/null && install_browser; }; }; then
        echo "kbench setup: installed chromium (for the browser test of kbench report)" >&2
    else
        echo "kbench setup: could not install chromium (optional: the browser test of kbench report then skips; apt-get install chromium adds it)." >&2
    fi
fi

# Open MPI's mpirun, MPICH's mpiexec, Slurm and munge run the cluster tests
# (tests/cluster), which start the shards of a run through them; they are
# optional (the tests skip, saying why, without them), so a failed install
# does not stop setup.  No daemon is configured: the Slurm test starts and
# stops its own.  KBENCH_SETUP_CLUSTER=0 leaves them out.
if [ "${KBENCH_SETUP_CLUSTER:-1}" != 0 ]; then
    cluster=""
    for p in openmpi-bin mpich munge slurmctld slurmd slurm-client; do
        have_pkg "$p" || cluster="$cluster $p"
    done
    if [ -n "$cluster" ]; then
        if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo=none; fi
        install_cluster() {
            DEBIAN_FRONTEND=noninteractive $sudo "$aptw" install -y -qq --no-install-recommends $cluster >&2 2>/dev/null
        }
        if [ "$sudo" != none ] && { install_cluster || { $sudo "$aptw" update -qq >&2 2>/dev/null && install_cluster; }; }; then
            echo "kbench setup: installed$cluster (for the cluster tests)" >&2
        else
            echo "kbench setup: could not install$cluster (optional: the cluster tests then skip; apt-get install$cluster adds them)." >&2
        fi
    fi
fi

# nvcc: on PATH, or where the toolkit installs it by default.
if ! command -v nvcc >/dev/null 2>&1; then
    for d in /usr/local/cuda/bin /usr/local/cuda-13.0/bin /usr/lib/nvidia-cuda-toolkit/bin; do
        if [ -x "$d/nvcc" ]; then PATH="$d:$PATH"; export PATH; break; fi
    done
fi
command -v nvcc >/dev/null 2>&1 || {
    echo "kbench setup: nvcc was not found; install the CUDA toolkit (12.x or 13.x) and put its bin/ on PATH." >&2
    exit 2
}

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES="${KBENCH_CUDA_ARCHITECTURES:-90}" >&2
fi
cmake --build "$build" >&2
