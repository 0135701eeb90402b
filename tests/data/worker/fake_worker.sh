#!/bin/sh
# Stand-in for tgemm-worker in the WorkerClient tests: speaks the framing, owns no GPU.
# For each request it appends the kind to $FAKE_WORKER_DIR/log and the payload to
# $FAKE_WORKER_DIR/payloads, then acts on the first of these files that exists:
#   <kind>.exit_once  exit with the status in the file, and delete it (crash once)
#   <kind>.exit       exit with the status in the file (crash every time)
#   <kind>.hang       sleep forever (the watchdog must kill it)
#   <kind>.frame      answer with the file's bytes (a whole frame, written by the test)
# With none of them (quit, say) it exits 0, as it does on EOF.
dir="$FAKE_WORKER_DIR"
# Library chatter: must not reach the protocol pipe.
echo "fake worker: chatter on stdout"
echo "fake worker: chatter on stderr" >&2
while IFS= read -r len <&3; do
  payload=$(head -c "$len" <&3)
  kind=$(printf '%s\n' "$payload" | sed -n 's/^kind: *"\{0,1\}\([a-z]*\).*$/\1/p' | head -n 1)
  echo "$kind" >> "$dir/log"
  printf '%s\n---\n' "$payload" >> "$dir/payloads"
  if [ -f "$dir/$kind.exit_once" ]; then
    status=$(cat "$dir/$kind.exit_once")
    rm -f "$dir/$kind.exit_once"
    exit "$status"
  elif [ -f "$dir/$kind.exit" ]; then
    exit "$(cat "$dir/$kind.exit")"
  elif [ -f "$dir/$kind.hang" ]; then
    exec sleep 100000
  elif [ -f "$dir/$kind.frame" ]; then
    cat "$dir/$kind.frame" >&4
  else
    exit 0
  fi
done
exit 0
