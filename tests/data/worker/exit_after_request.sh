#!/bin/sh
# Stand-in for a tgemm-worker that dies on every request: reads one frame, exits 1.
IFS= read -r len <&3 && head -c "$len" <&3 > /dev/null
exit 1
