package crd

import (
	"net/http"
	"testing"
)

// TestCRDRealK8s replays what kube-apiserver v1.37.2 answered
// (testdata/realk8s, recorded by testdata/record.sh) for a CRD with CEL
// rules, selectableFields and two served versions:
//   - 96: CRDs refused for rules that do not compile, a selectable field
//     the schema lacks, and a messageExpression over the cost limit;
//   - 97, 98: the Gizmo CRD made, its two versions discovered (v1
//     preferred, v1beta1 listed, one storageVersionHash);
//   - 99, 100: CEL rules on create (message, messageExpression,
//     reason, fieldPath) and on update (transition rules with oldSelf,
//     on the status subresource too); a type error blocks the rules;
//   - 101, 102: the CRD tightened, an update that leaves the now invalid
//     field as it was is let through (ratcheting), one that changes it
//     is not;
//   - 103: a Gizmo written through v1beta1 is read through v1 and the
//     other way round, each version pruning and defaulting with its own
//     schema; v1beta1 has no status subresource;
//   - 104: field selectors on the selectable fields of v1, refused on
//     v1beta1, which declares none, and for a field that is not
//     selectable; a watch with one;
//   - 105: the CRD deleted.
func TestCRDRealK8s(t *testing.T) {
	c := newClient(t)
	c.do(http.MethodPost, "/api/v1/namespaces", []byte(`{"metadata":{"name":"wt-29d"}}`), "")
	for _, name := range []string{
		"96-crd-cel-uncompilable",
		"97-crd-gizmos-create",
		"98-crd-gizmos-discovery",
		"99-cr-cel-create-422",
		"100-cr-cel-transition",
		"101-crd-tighten",
		"102-cr-ratcheting",
		"103-cr-versions",
		"104-cr-selectable-fields",
		"105-crd-delete",
	} {
		c.replay("realk8s/" + name)
	}
}
