#!/bin/sh
# Stand-in for a tgemm-worker that dies on every request: reads one line, exits 1.
IFS= read -r line <&3
exit 1
