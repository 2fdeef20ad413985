#!/usr/bin/env bash
# Stop what up.sh started (by the pids it recorded), then remove its data.
RUN=${REALK8S_RUN:-/tmp/realk8s}
for p in kcm apiserver etcd; do
  f=$RUN/$p.pid
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$f"
done
[ "${KEEP_DATA:-}" ] || rm -rf "$RUN/etcd"
echo down
