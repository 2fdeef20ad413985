#!/usr/bin/env bash
# Start a minimal real control plane: etcd 3.7.0, kube-apiserver and
# kube-controller-manager v1.37.2 (built from the Go module proxy into ./bin).
# No scheduler, no kubelet. Writes ./kubeconfig (admin token, system:masters).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$HERE/bin
RUN=${REALK8S_RUN:-/tmp/realk8s}          # data, certs, logs, pids
ETCD_PORT=${ETCD_PORT:-23790}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-23800}
API_PORT=${API_PORT:-16443}
KCM_PORT=${KCM_PORT:-10257}

if [ -f "$RUN/apiserver.pid" ] && kill -0 "$(cat "$RUN/apiserver.pid")" 2>/dev/null; then
  echo "already running (pids in $RUN); run down.sh first" >&2; exit 1
fi
rm -rf "$RUN"; mkdir -p "$RUN"/{certs,logs}; mkdir -m 700 "$RUN/etcd"
trap '[ $? = 0 ] || { echo "up.sh failed: stopping what it started" >&2; "$HERE/down.sh" >/dev/null; }' EXIT

# Service-account signing key; admin and controller-manager tokens (both in
# system:masters: with --use-service-account-credentials=false every controller
# runs as the controller-manager user, whose bootstrap role alone is too narrow).
openssl genrsa -out "$RUN/certs/sa.key" 2048 2>/dev/null
openssl rsa -in "$RUN/certs/sa.key" -pubout -out "$RUN/certs/sa.pub" 2>/dev/null
ADMIN_TOKEN=$(openssl rand -hex 16)
KCM_TOKEN=$(openssl rand -hex 16)
cat > "$RUN/certs/tokens.csv" <<CSV
$ADMIN_TOKEN,admin,admin-uid,"system:masters"
$KCM_TOKEN,system:kube-controller-manager,kcm-uid,"system:masters"
CSV

nice -n 10 "$BIN/etcd" --name realk8s --data-dir "$RUN/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "realk8s=http://127.0.0.1:$ETCD_PEER_PORT" \
  --unsafe-no-fsync --log-level warn >"$RUN/logs/etcd.log" 2>&1 &
echo $! > "$RUN/etcd.pid"
for i in $(seq 1 100); do curl -sf "http://127.0.0.1:$ETCD_PORT/health" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$ETCD_PORT/health" >/dev/null || { echo "etcd did not start; see $RUN/logs/etcd.log" >&2; exit 1; }

nice -n 10 "$BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
  --endpoint-reconciler-type none \
  --cert-dir "$RUN/certs" \
  --token-auth-file "$RUN/certs/tokens.csv" \
  --authorization-mode Node,RBAC \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$RUN/certs/sa.pub" \
  --service-account-signing-key-file "$RUN/certs/sa.key" \
  --service-cluster-ip-range 10.96.0.0/16 \
  ${API_FLAGS:-} \
  --v 1 >"$RUN/logs/kube-apiserver.log" 2>&1 &
echo $! > "$RUN/apiserver.pid"

kubeconfig() { # file token
  cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: realk8s
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $RUN/certs/apiserver.crt
users:
- name: $3
  user:
    token: $2
contexts:
- name: realk8s
  context: {cluster: realk8s, user: $3}
current-context: realk8s
KC
}
for i in $(seq 1 300); do
  [ "$(curl -sk -H "Authorization: Bearer $ADMIN_TOKEN" "https://127.0.0.1:$API_PORT/readyz" 2>/dev/null)" = ok ] && break
  kill -0 "$(cat "$RUN/apiserver.pid")" 2>/dev/null || { echo "kube-apiserver exited; see $RUN/logs/kube-apiserver.log" >&2; exit 1; }
  sleep 0.5
done
[ "$(curl -sk -H "Authorization: Bearer $ADMIN_TOKEN" "https://127.0.0.1:$API_PORT/readyz")" = ok ] || { echo "kube-apiserver not ready; see $RUN/logs/kube-apiserver.log" >&2; exit 1; }

# The self-signed serving cert from --cert-dir is its own CA; it names 127.0.0.1.
kubeconfig "$HERE/kubeconfig" "$ADMIN_TOKEN" admin
kubeconfig "$RUN/kcm.kubeconfig" "$KCM_TOKEN" system:kube-controller-manager

nice -n 10 "$BIN/kube-controller-manager" \
  --kubeconfig "$RUN/kcm.kubeconfig" \
  --authentication-kubeconfig "$RUN/kcm.kubeconfig" --authorization-kubeconfig "$RUN/kcm.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$KCM_PORT" \
  --controllers '*' --use-service-account-credentials=false \
  --service-account-private-key-file "$RUN/certs/sa.key" \
  --root-ca-file "$RUN/certs/apiserver.crt" \
  --service-cluster-ip-range 10.96.0.0/16 \
  --leader-elect=false \
  --v 1 >"$RUN/logs/kube-controller-manager.log" 2>&1 &
echo $! > "$RUN/kcm.pid"
for i in $(seq 1 120); do
  curl -sk "https://127.0.0.1:$KCM_PORT/healthz" 2>/dev/null | grep -qx ok && break
  kill -0 "$(cat "$RUN/kcm.pid")" 2>/dev/null || { echo "kube-controller-manager exited; see $RUN/logs/kube-controller-manager.log" >&2; exit 1; }
  sleep 0.5
done
echo "up: kube-apiserver https://127.0.0.1:$API_PORT (etcd 127.0.0.1:$ETCD_PORT), kubeconfig $HERE/kubeconfig, logs $RUN/logs"
