#!/usr/bin/env bash
# record-gc.sh records what a real control plane (kube-apiserver and
# kube-controller-manager v1.37.2, with its garbage collector) answers
# and streams when an owner is deleted with each propagation policy, and
# the DELETE details the workshop cluster copies (202 Accepted,
# preconditions, a second DELETE of an object held by a finalizer), and a
# LIST with resourceVersion and limit. It writes the transcripts 120-134
# into internal/apiserver/testdata/transcripts, in their format (see
# internal/apiserver/transcripttest), which
# internal/apiserver/gc_transcript_test.go replays on the workshop
# cluster. A run takes about two minutes; uids and resourceVersions
# change at every run, and the order in which the collector takes an
# owner's dependents may too (the test allows for both).
#
#   hack/realk8s/up.sh && hack/realk8s/record-gc.sh [KUBECONFIG]; hack/realk8s/down.sh
#
# On a shared machine, hold the lock other recorders hold:
#   flock /tmp/realk8s.lock bash -c 'hack/realk8s/up.sh && hack/realk8s/record-gc.sh && hack/realk8s/down.sh'
#
# It talks to kube-apiserver through `kubectl proxy` as curl (the field
# manager of what it writes), in fresh namespaces gc-*, and stops
# kube-controller-manager (by the pid up.sh recorded) for the last file,
# 131, which shows a Foreground delete where no collector runs (as in
# envtest); run down.sh after it. Needs kubectl, curl and jq.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KC=${1:-$HERE/kubeconfig}
RUN=${REALK8S_RUN:-/tmp/realk8s}
PORT=${PROXY_PORT:-18291}
out=$HERE/../../internal/apiserver/testdata/transcripts
tmp=$(mktemp -d)
kubectl --kubeconfig "$KC" proxy --port="$PORT" >"$tmp/proxy.log" 2>&1 &
proxy=$!
trap 'kill $proxy 2>/dev/null; rm -rf "$tmp"' EXIT
S=http://127.0.0.1:$PORT
for i in $(seq 1 50); do curl -sf "$S/version" >/dev/null && break; sleep 0.2; done

file=
begin() { file="$out/$1.txt"; : >"$file"; }
strip() { tr -d '\r' | grep -v -i -E '^(date|audit-id|x-kubernetes-pf-[a-z]*-uid|content-length|warning):'; }
# rec METHOD PATH [BODY]: one exchange, appended to $file; the answer's
# body is left in $tmp/last.
rec() {
	local method=$1 path=$2 body=${3-} ct=application/json
	[ "$method" = PATCH ] && ct=application/merge-patch+json
	local args=(-sS -i -X "$method" -H "Accept: application/json" -H "User-Agent: curl/8.5.0")
	[ -n "$body" ] && args+=(-H "Content-Type: $ct" --data-binary "$body")
	curl "${args[@]}" "$S$path" | strip >"$tmp/answer"
	{
		echo "### $method $path"
		[ -n "$body" ] && echo "$body"
		cat "$tmp/answer"
		echo
		echo
	} >>"$file"
	sed '1,/^$/d' "$tmp/answer" >"$tmp/last"
}
# comment TEXT: a line the transcript reader skips.
comment() { echo "### $*" >>"$file"; }
# watchstart PATH: opens a watch in the background (it ends by its
# timeoutSeconds); watchend appends it to $file.
watchstart() {
	wpath=$1
	curl -sS -i -N -H "Accept: application/json" -H "User-Agent: curl/8.5.0" "$S$1" >"$tmp/watch" &
	wpid=$!
	sleep 0.5
}
watchend() {
	wait "$wpid" || true
	{
		echo "### GET $wpath"
		strip <"$tmp/watch"
		echo
	} >>"$file"
}
q() { curl -sS -H "Accept: application/json" "$@"; }
newns() {
	q -X DELETE "$S/api/v1/namespaces/$1" >/dev/null || true
	while curl -sf "$S/api/v1/namespaces/$1" >/dev/null; do sleep 0.5; done
	q -X POST -H "Content-Type: application/json" --data-binary "{\"metadata\":{\"name\":\"$1\"}}" "$S/api/v1/namespaces" >/dev/null
	# kube-controller-manager writes kube-root-ca.crt into it: wait, so
	# that it is there before anything recorded (lists count it).
	for i in $(seq 1 100); do curl -sf "$S/api/v1/namespaces/$1/configmaps/kube-root-ca.crt" >/dev/null && break; sleep 0.1; done
}
uid() { jq -r .metadata.uid "$tmp/last"; }
rv() { jq -r .metadata.resourceVersion "$tmp/last"; }
cm() { # name [ownerReferences JSON] [finalizers JSON]
	echo "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\"${2:+,\"ownerReferences\":$2}${3:+,\"finalizers\":$3}},\"data\":{\"k\":\"v\"}}"
}
ref() { # name uid [block]
	echo "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"$1\",\"uid\":\"$2\"${3:+,\"blockOwnerDeletion\":true}}"
}

# The collector acts only once its graph has synced: wait until it
# deletes a ConfigMap whose owner does not exist.
newns gc-ready
q -X POST -H "Content-Type: application/json" --data-binary "$(cm canary "[$(ref nobody 00000000-0000-0000-0000-000000000000)]")" "$S/api/v1/namespaces/gc-ready/configmaps" >/dev/null
for i in $(seq 1 240); do curl -sf "$S/api/v1/namespaces/gc-ready/configmaps/canary" >/dev/null || break; sleep 0.5; done
curl -sf "$S/api/v1/namespaces/gc-ready/configmaps/canary" >/dev/null && { echo "the garbage collector did not act in 120 s" >&2; exit 1; }

# family NS: owner, other-owner, and three dependents of owner:
# blocking (blockOwnerDeletion), plain (without), shared (also owned by
# other-owner); sets $owner, $last_rv.
family() {
	local C=/api/v1/namespaces/$1/configmaps
	rec POST $C "$(cm owner)"
	owner=$(uid)
	rec POST $C "$(cm other-owner)"
	local other; other=$(uid)
	rec POST $C "$(cm blocking "[$(ref owner "$owner" block)]")"
	rec POST $C "$(cm plain "[$(ref owner "$owner")]")"
	rec POST $C "$(cm shared "[$(ref owner "$owner"),$(ref other-owner "$other")]")"
	last_rv=$(rv)
	sleep 2 # the collector's graph sees them
}

# gcfile N NAME DELETE-BODY-OR-QUERY: a family, a watch from after it,
# the owner's DELETE, the watch's frames, the list left.
gcfile() {
	local n=$1 name=$2 how=$3 ns=gc-$2
	newns "$ns"
	begin "$n-gc-$name"
	local C=/api/v1/namespaces/$ns/configmaps
	family "$ns"
	comment "the watch below is opened here, before the DELETE, and ends after 8 s"
	watchstart "$C?watch=true&resourceVersion=$last_rv&timeoutSeconds=8"
	case $how in
	"") rec DELETE $C/owner ;;
	\?*) rec DELETE "$C/owner$how" ;;
	*) rec DELETE $C/owner "$how" ;;
	esac
	watchend
	rec GET $C
}

gcfile 120 background '{"propagationPolicy":"Background"}'
gcfile 121 default ''
gcfile 122 foreground '{"propagationPolicy":"Foreground"}'
gcfile 123 orphan '{"propagationPolicy":"Orphan"}'
gcfile 124 orphandependents-true '?orphanDependents=true'
gcfile 125 orphandependents-false '?orphanDependents=false'

# 126: a Foreground delete waits for a dependent with
# blockOwnerDeletion that a finalizer of its own holds; it completes
# once that finalizer is removed. A chain: leaf is a dependent of
# blocking, so blocking is deleted in the foreground too.
ns=gc-foreground-waits
newns $ns
begin 126-gc-foreground-waits
C=/api/v1/namespaces/$ns/configmaps
family $ns
rec POST $C "$(cm held "[$(ref owner "$owner" block)]" '["example.com/hold"]')"
rec GET $C/blocking
blocking=$(uid)
rec POST $C "$(cm leaf "[$(ref blocking "$blocking" block)]")"
last_rv=$(rv)
sleep 2
comment "the watch below is opened here, before the DELETE, and ends after 10 s"
watchstart "$C?watch=true&resourceVersion=$last_rv&timeoutSeconds=10"
rec DELETE $C/owner '{"propagationPolicy":"Foreground"}'
sleep 3
comment "three seconds later, the owner still waits for held"
rec GET $C/owner
rec GET $C/held
rec PATCH $C/held '{"metadata":{"finalizers":null}}'
watchend
rec GET $C

# 127: dependents whose owner is not there: no object of that name, or
# one of that name with another uid.
ns=gc-owner-missing
newns $ns
begin 127-gc-owner-missing
C=/api/v1/namespaces/$ns/configmaps
rec POST $C "$(cm owner)"
last_rv=$(rv)
comment "the watch below is opened here, before the creates, and ends after 6 s"
watchstart "$C?watch=true&resourceVersion=$last_rv&timeoutSeconds=6"
rec POST $C "$(cm no-such-name "[$(ref nobody 11111111-1111-1111-1111-111111111111)]")"
rec POST $C "$(cm wrong-uid "[$(ref owner 22222222-2222-2222-2222-222222222222)]")"
watchend
rec GET $C

# 128: what a DELETE answers for an object held by a finalizer: 202
# only for orphanDependents=false (the handler's rule), 200 otherwise;
# a DELETE of an object already being deleted still sets the deletion
# finalizers the options ask for.
ns=gc-held
newns $ns
begin 128-delete-held-by-finalizer
C=/api/v1/namespaces/$ns/configmaps
rec POST $C "$(cm held '' '["example.com/hold"]')"
rec POST $C "$(cm held2 '' '["example.com/hold"]')"
last_rv=$(rv)
comment "the watch below is opened here and ends after 8 s"
watchstart "$C?watch=true&resourceVersion=$last_rv&timeoutSeconds=8"
rec DELETE "$C/held?orphanDependents=false"
rec DELETE $C/held
rec DELETE $C/held '{"propagationPolicy":"Foreground"}'
rec DELETE $C/held2 '{"propagationPolicy":"Background"}'
rec DELETE $C/held2 '{"propagationPolicy":"Orphan"}'
sleep 2
rec GET $C/held2
rec PATCH $C/held '{"metadata":{"finalizers":null}}'
rec PATCH $C/held2 '{"metadata":{"finalizers":null}}'
watchend

# 129: DELETE preconditions.
ns=gc-preconditions
newns $ns
begin 129-delete-preconditions
C=/api/v1/namespaces/$ns/configmaps
rec POST $C "$(cm p)"
puid=$(uid)
prv=$(rv)
rec DELETE $C/p '{"preconditions":{"uid":"33333333-3333-3333-3333-333333333333"}}'
rec DELETE $C/p '{"preconditions":{"resourceVersion":"1"}}'
rec DELETE $C/p '{"preconditions":{"uid":""}}'
rec DELETE $C/p "{\"preconditions\":{\"uid\":\"$puid\",\"resourceVersion\":\"$prv\"}}"
D=/apis/apps/v1/namespaces/$ns/deployments
rec POST $D '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"paused":true,"replicas":0,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}'
# The deployment controller writes its status: wait for it, and read
# the resourceVersion the next answer names.
for i in $(seq 1 50); do [ "$(q "$S$D/d" | jq .status.observedGeneration)" = 1 ] && break; sleep 0.2; done
rec GET $D/d
rec DELETE $D/d '{"preconditions":{"resourceVersion":"1"}}'
rec DELETE $D/d '{"propagationPolicy":"Orphan"}'

# 130: a LIST with resourceVersion and limit and no resourceVersionMatch
# is served at exactly that resourceVersion (the legacy exact match).
ns=gc-list
newns $ns
begin 130-list-rv-limit
C=/api/v1/namespaces/$ns/configmaps
rec POST $C "$(cm a)"
rec POST $C "$(cm b)"
at=$(rv)
rec POST $C "$(cm c)"
rec PUT $C/a "$(cm a | jq -c '.data.k="changed"')"
rec GET "$C?resourceVersion=$at&limit=1"
rec GET "$C?resourceVersion=$at&limit=10"
rec GET "$C?resourceVersion=$at"
rec GET "$C?resourceVersion=$at&resourceVersionMatch=NotOlderThan&limit=1"
rec GET "$C?resourceVersion=$at&resourceVersionMatch=Exact&limit=1"

# 132: a collection's DELETE passes its options to each delete.
ns=gc-deletecollection
newns $ns
begin 132-gc-deletecollection-orphan
C=/api/v1/namespaces/$ns/configmaps
family $ns
comment "the watch below is opened here, before the DELETE, and ends after 8 s"
watchstart "$C?watch=true&resourceVersion=$last_rv&timeoutSeconds=8"
rec DELETE "$C?fieldSelector=metadata.name%3Downer" '{"propagationPolicy":"Orphan"}'
watchend
rec GET $C

# 133: a namespaced dependent of a cluster-scoped owner (a ClusterRole).
ns=gc-cluster-owner
newns $ns
begin 133-gc-cluster-scoped-owner
C=/api/v1/namespaces/$ns/configmaps
R=/apis/rbac.authorization.k8s.io/v1/clusterroles
q -X DELETE "$S$R/gc-owner" >/dev/null || true
rec POST $R '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"gc-owner"},"rules":[]}'
cr=$(uid)
rec POST $C "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"dependent\",\"ownerReferences\":[{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"name\":\"gc-owner\",\"uid\":\"$cr\"}]}}"
last_rv=$(rv)
sleep 2
comment "the watch below is opened here, before the DELETE, and ends after 6 s"
watchstart "$C?watch=true&resourceVersion=$last_rv&timeoutSeconds=6"
rec DELETE $R/gc-owner
watchend
rec GET $C

# 134: a Foreground delete does not wait for a dependent without
# blockOwnerDeletion, even one that a finalizer holds.
ns=gc-foreground-nonblocking
newns $ns
begin 134-gc-foreground-nonblocking-held
C=/api/v1/namespaces/$ns/configmaps
rec POST $C "$(cm owner)"
owner=$(uid)
rec POST $C "$(cm held "[$(ref owner "$owner")]" '["example.com/hold"]')"
last_rv=$(rv)
sleep 2
comment "the watch below is opened here, before the DELETE, and ends after 6 s"
watchstart "$C?watch=true&resourceVersion=$last_rv&timeoutSeconds=6"
rec DELETE $C/owner '{"propagationPolicy":"Foreground"}'
watchend
rec GET $C
rec PATCH $C/held '{"metadata":{"finalizers":null}}'

# 131: without kube-controller-manager (as in envtest, whose
# kube-apiserver keeps --enable-garbage-collector), a Foreground delete
# marks the owner and nothing removes the finalizer.
kill "$(cat "$RUN/kcm.pid")"
while kill -0 "$(cat "$RUN/kcm.pid")" 2>/dev/null; do sleep 0.2; done
gcfile 131 no-collector-foreground '{"propagationPolicy":"Foreground"}'

for ns in gc-ready gc-background gc-default gc-foreground gc-orphan gc-orphandependents-true gc-orphandependents-false \
	gc-foreground-waits gc-owner-missing gc-held gc-preconditions gc-list gc-deletecollection gc-cluster-owner \
	gc-foreground-nonblocking gc-no-collector-foreground; do
	q -X DELETE "$S/api/v1/namespaces/$ns" >/dev/null || true
done
echo "recorded into $out"
