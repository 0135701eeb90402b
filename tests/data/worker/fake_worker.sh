#!/bin/sh
# Stand-in for tgemm-worker in the WorkerClient tests: speaks the framing (one JSON message
# per line), owns no GPU. For each request it appends its "type" to $FAKE_WORKER_DIR/log and
# the line to $FAKE_WORKER_DIR/payloads, then acts on the first of these files that exists:
#   <type>.exit_once  exit with the status in the file, and delete it (crash once)
#   <type>.exit       exit with the status in the file (crash every time)
#   <type>.hang       sleep forever (the watchdog must kill it)
#   <type>.frame      answer with the file's bytes (a whole line, written by the test);
#                     then, if <type>.then_exit exists, exit with the status in it
# With none of them (quit, say) it exits 0, as it does on EOF.
dir="$FAKE_WORKER_DIR"
# Library chatter: must not reach the protocol pipe.
echo "fake worker: chatter on stdout"
echo "fake worker: chatter on stderr" >&2
while IFS= read -r line <&3; do
  # The encoder writes "type" first: {"type":"evaluate",...}
  kind=$(printf '%s\n' "$line" | sed -n 's/^{"type":"\([a-z]*\)".*$/\1/p')
  echo "$kind" >> "$dir/log"
  printf '%s\n' "$line" >> "$dir/payloads"
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
    [ -f "$dir/$kind.then_exit" ] && exit "$(cat "$dir/$kind.then_exit")"
  else
    exit 0
  fi
done
exit 0
