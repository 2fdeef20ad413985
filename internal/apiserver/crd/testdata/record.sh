#!/usr/bin/env bash
# record.sh records what a real kube-apiserver answers for the CRD
# features the workshop cluster serves since issue 29 (CEL rules,
# ratcheting, selectableFields, several served versions), in the format
# of internal/apiserver/testdata/transcripts. Run against a cluster
# through kubectl proxy:
#   kubectl --kubeconfig K proxy --port=18290 &
#   ./record.sh http://127.0.0.1:18290
# It creates namespace wt-29d and CRD gizmos.wt29d.example.com, and
# deletes both at the end.
set -euo pipefail
S=${1:-http://127.0.0.1:18290}
cd "$(dirname "$0")"
out=realk8s
mkdir -p "$out"
file=
begin() { file="$out/$1.txt"; : >"$file"; }
# rec METHOD PATH [BODY]
rec() {
	local method=$1 path=$2 body=${3-} ct=application/json
	[ "$method" = PATCH ] && ct=application/merge-patch+json
	{
		echo "### $method $path"
		[ -n "$body" ] && echo "$body"
		if [ -n "$body" ]; then
			curl -sS -i -X "$method" -H "Content-Type: $ct" -H "Accept: application/json" -H "User-Agent: curl/8.5.0" --data-binary "$body" "$S$path"
		else
			curl -sS -i -X "$method" -H "Accept: application/json" -H "User-Agent: curl/8.5.0" "$S$path"
		fi
		echo
		echo
	} | tr -d '\r' | grep -v -i -E '^(date|audit-id|x-kubernetes-pf-[a-z]*-uid|content-length):' >>"$file"
}
# watch PATH SECONDS: the frames a watch sends in that time.
watchrec() {
	{
		echo "### GET $1"
		curl -sS -i -N --max-time "$2" -H "Accept: application/json" -H "User-Agent: curl/8.5.0" "$S$1" || true
		echo
	} | tr -d '\r' | grep -v -i -E '^(date|audit-id|x-kubernetes-pf-[a-z]*-uid|content-length):' >>"$file"
}
NS=/api/v1/namespaces/wt-29d
G1=/apis/wt29d.example.com/v1/namespaces/wt-29d/gizmos
G0=/apis/wt29d.example.com/v1beta1/namespaces/wt-29d/gizmos
CRD=/apis/apiextensions.k8s.io/v1/customresourcedefinitions

curl -sS -X DELETE "$S$CRD/gizmos.wt29d.example.com" >/dev/null || true
curl -sS -X DELETE "$S$NS" >/dev/null || true
while curl -sf "$S$NS" >/dev/null || curl -sf "$S$CRD/gizmos.wt29d.example.com" >/dev/null; do sleep 1; done
curl -sS -X POST -H "Content-Type: application/json" --data-binary '{"metadata":{"name":"wt-29d"}}' "$S/api/v1/namespaces" >/dev/null

begin 96-crd-cel-uncompilable
rec POST $CRD '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"bads.wt29d.example.com"},"spec":{"group":"wt29d.example.com","scope":"Namespaced","names":{"plural":"bads","singular":"bad","kind":"Bad","listKind":"BadList"},"versions":[{"name":"v1","served":true,"storage":true,"selectableFields":[{"jsonPath":".spec.nope"}],"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.nope == 1"},{"rule":"self.color ==","message":"broken"}],"properties":{"color":{"type":"string"}}}}}}}]}}'

# The rule's messageExpression as first written: too costly.
rec POST $CRD "$(python3 -c '
import json
c=json.load(open("gizmo-crd.json"))
c["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"][1]["messageExpression"]="\x27size \x27 + string(self.size) + \x27 is too large\x27"
print(json.dumps(c,separators=(",",":")))')"

begin 97-crd-gizmos-create
rec POST $CRD "$(tr -d '\n' <gizmo-crd.json)"
for i in $(seq 1 30); do
	curl -sS "$S$CRD/gizmos.wt29d.example.com" | grep -q '"type": "Established",' && break
	sleep 0.2
done
sleep 2

begin 98-crd-gizmos-discovery
rec GET /apis/wt29d.example.com
rec GET /apis/wt29d.example.com/v1
rec GET /apis/wt29d.example.com/v1beta1

begin 99-cr-cel-create-422
rec POST $G1 '{"apiVersion":"wt29d.example.com/v1","kind":"Gizmo","metadata":{"name":"g-bad"},"spec":{"color":"black","minReplicas":3,"maxReplicas":1,"size":12}}'
rec POST $G1 '{"apiVersion":"wt29d.example.com/v1","kind":"Gizmo","metadata":{"name":"g-bad"},"spec":{"color":"black","minReplicas":"three","maxReplicas":1}}'

begin 100-cr-cel-transition
rec POST $G1 '{"apiVersion":"wt29d.example.com/v1","kind":"Gizmo","metadata":{"name":"g1"},"spec":{"color":"blue","mode":"fast","minReplicas":1,"maxReplicas":2,"name":"abcdefgh"}}'
rec PATCH $G1/g1 '{"spec":{"mode":"slow"}}'
rec PATCH $G1/g1/status '{"status":{"phase":"Running"}}'
rec PATCH $G1/g1/status '{"status":{"phase":"Broken"}}'

begin 101-crd-tighten
rec PATCH $CRD/gizmos.wt29d.example.com "$(python3 -c '
import json
c=json.load(open("gizmo-crd.json"))
n=c["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["name"]
n["maxLength"]=5
n["x-kubernetes-validations"]=[{"rule":"self.startsWith(\"x\")","message":"name must start with x"}]
print(json.dumps({"spec":{"versions":c["spec"]["versions"]}},separators=(",",":")))')"
sleep 2

begin 102-cr-ratcheting
rec PATCH $G1/g1 '{"spec":{"color":"green"}}'
rec PATCH $G1/g1 '{"spec":{"name":"abcdefghi"}}'
rec POST $G1 '{"apiVersion":"wt29d.example.com/v1","kind":"Gizmo","metadata":{"name":"g-long"},"spec":{"color":"blue","minReplicas":1,"maxReplicas":2,"name":"abcdefgh"}}'

begin 103-cr-versions
rec POST $G0 '{"apiVersion":"wt29d.example.com/v1beta1","kind":"Gizmo","metadata":{"name":"g2","labels":{"app":"g"}},"spec":{"color":"red","mode":"slow","minReplicas":1,"maxReplicas":1}}'
rec GET $G1/g2
rec POST $G1 '{"apiVersion":"wt29d.example.com/v1","kind":"Gizmo","metadata":{"name":"g3"},"spec":{"color":"red","mode":"slow","minReplicas":1,"maxReplicas":1}}'
rec GET $G0/g3
rec GET $G0
rec PATCH $G0/g3 '{"spec":{"minReplicas":2,"maxReplicas":1}}'
rec PUT $G0/g3/status '{"apiVersion":"wt29d.example.com/v1beta1","kind":"Gizmo","metadata":{"name":"g3"},"status":{"phase":"Running"}}'

begin 104-cr-selectable-fields
rec GET "$G1?fieldSelector=spec.color%3Dred"
rec GET "/apis/wt29d.example.com/v1/gizmos?fieldSelector=spec.tier%21%3Dgold"
rec GET "$G1?fieldSelector=spec.mode%3Dslow"
rec GET "$G0?fieldSelector=spec.color%3Dred"
rec GET "$G1?fieldSelector=metadata.name%3Dg1,spec.color%3Dgreen"
watchrec "$G1?watch=true&fieldSelector=spec.color%3Dred" 2

begin 105-crd-delete
rec DELETE $CRD/gizmos.wt29d.example.com
curl -sS -X DELETE "$S$NS" >/dev/null
