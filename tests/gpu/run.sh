#!/bin/sh
# The reduce family's GPU tests under their old name: plugins/reduce/gpu.sh
# (the convention of every family) does the work; this name stays for the
# command lines and evidence scripts that use it.
#   tests/gpu/run.sh BUILD_DIR [--study]
exec sh "$(cd "$(dirname "$0")/../.." && pwd)/plugins/reduce/gpu.sh" "$@"
