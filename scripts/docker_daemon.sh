#!/usr/bin/env bash
# Start or stop a local Docker daemon for the docker sandbox backend (no registry, no iptables).
#   scripts/docker_daemon.sh start   # exit 0 when a daemon answers (started now or already running)
#   scripts/docker_daemon.sh stop    # stops only a daemon this script started
#   scripts/docker_daemon.sh status
# Needs root and the docker.io package (SE_GYM_SETUP_DOCKER=1 bash scripts/setup/sandbox.sh).
set -euo pipefail
STATE=/run/se-gym-docker
LOG=/var/log/se-gym-docker
cmd=${1:-status}
answers() { docker info >/dev/null 2>&1; }
case "$cmd" in
  status)
    if answers; then echo "docker daemon: running"; else echo "docker daemon: not running"; exit 1; fi ;;
  start)
    if answers; then echo "docker daemon: already running"; exit 0; fi
    command -v dockerd >/dev/null || { echo "docker daemon: dockerd not installed (apt-get install docker.io)" >&2; exit 3; }
    [ "$(id -u)" = 0 ] || { echo "docker daemon: need root to start dockerd" >&2; exit 3; }
    mkdir -p "$STATE" "$LOG"
    if ! pgrep -x containerd >/dev/null; then
      setsid containerd >"$LOG/containerd.log" 2>&1 < /dev/null &
      echo $! > "$STATE/containerd.pid"
    fi
    for _ in $(seq 50); do [ -S /run/containerd/containerd.sock ] && break; sleep 0.2; done
    setsid dockerd --iptables=false --ip6tables=false --bridge=none \
      --containerd=/run/containerd/containerd.sock >"$LOG/dockerd.log" 2>&1 < /dev/null &
    echo $! > "$STATE/dockerd.pid"
    for _ in $(seq 150); do answers && { echo "docker daemon: started"; exit 0; }; sleep 0.2; done
    echo "docker daemon: did not come up; see $LOG/dockerd.log: $(tail -n 1 "$LOG/dockerd.log" 2>/dev/null)" >&2
    exit 4 ;;
  stop)
    for name in dockerd containerd; do
      f="$STATE/$name.pid"
      [ -f "$f" ] || continue
      pid=$(cat "$f")
      if kill "$pid" 2>/dev/null; then
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      fi
      rm -f "$f"
    done
    echo "docker daemon: stopped (what this script started)" ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
