#!/bin/sh
# needs: kernel tracing
# Command-line suite of `make check` for the corpus of real programs:
# runs tests/real/run (see there; `make real` runs it alone).
set -u
ARGUS=${ARGUS:-./argus} B=${B:-build} exec sh tests/real/run
