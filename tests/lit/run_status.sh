#!/bin/sh
# run_status.sh CMD... - runs CMD (stderr merged by the caller's 2>&1) and
# prints "exit=N" after its output, for lit tests that check exit codes.
"$@"
echo "exit=$?"
