#!/bin/sh
# needs: kernel tracing
# Command-line suite of `make check` for the corpus of real programs:
# runs tests/real/run (see there; `make real` runs it alone). The
# recordings of failed cases are kept under $B/real-failed (REAL_KEEP):
# a rare failure is a bug to find, with its evidence.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus} B=$B REAL_KEEP=${REAL_KEEP:-$B/real-failed} \
    exec sh tests/real/run
