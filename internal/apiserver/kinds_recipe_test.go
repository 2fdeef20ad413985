package apiserver

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// TestAddingABuiltinKind follows doc.go's recipe for adding a built-in
// kind, with one kube-apiserver v1.36.3 serves and the workshop cluster
// does not: node.k8s.io/v1 RuntimeClass. Step 1 runs openapi/gen.go as
// the recipe says (on a copy, writing into a temporary folder, so the
// package's own files stay as they are); step 2's strategy is the test's
// own; and the kind, which a contributor's rebuilt package would serve
// from builtinKinds, is served here at run time from the row gen.go
// wrote. It is then served, listed in discovery and printed as a Table.
func TestAddingABuiltinKind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run openapi/gen.go")
	}
	// Step 1: the resource added to gen.go's served, and gen.go run
	// from the openapi folder, on the documents kept in testdata.
	src, err := os.ReadFile(filepath.Join("openapi", "gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	served := regexp.MustCompile(`(?s)var served = \[\]struct \{.*?\n\}\{\n`)
	loc := served.FindIndex(src)
	if loc == nil {
		t.Fatal("openapi/gen.go: no served list; doc.go's recipe names it")
	}
	edited := string(src[:loc[1]]) + "\t{\"apis-node.k8s.io-v1\", []string{\"runtimeclasses\"}},\n" + string(src[loc[1]:])
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "openapi"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi", "gen.go"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Abs(filepath.Join("openapi", "testdata", "kube-apiserver-v1.36.3"))
	if err != nil {
		t.Fatal(err)
	}
	gen := exec.Command("go", "run", "gen.go", docs)
	gen.Dir = filepath.Join(dir, "openapi")
	// gen.go uses the standard library only: run outside any module.
	gen.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GO111MODULE=auto")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("go run gen.go: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "openapi", "apis__node.k8s.io__v1.json.gz")); err != nil {
		t.Errorf("gen.go wrote no document for node.k8s.io/v1: %v", err)
	}
	kinds, err := os.ReadFile(filepath.Join(dir, "zz_generated.kinds.go"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`\{group: "node.k8s.io", version: "v1", resource: "runtimeclasses", kind: "RuntimeClass"(.*)\},`).FindSubmatch(kinds)
	if row == nil {
		t.Fatalf("gen.go wrote no row for runtimeclasses:\n%s", kinds)
	}
	if string(row[1]) != ", deleteCollection: true" {
		t.Errorf("runtimeclasses row: %q, want cluster-scoped, no status or scale, deletecollection", row[1])
	}
	k := builtinKind{group: "node.k8s.io", version: "v1", resource: "runtimeclasses", kind: "RuntimeClass",
		deleteCollection: strings.Contains(string(row[1]), "deleteCollection: true"),
		namespaced:       strings.Contains(string(row[1]), "namespaced: true")}

	// Step 2: the kind's strategy in its group's registry_<group>.go,
	// gathered by strategiesOf; here, a printer only.
	gr := schema.GroupResource{Group: "node.k8s.io", Resource: "runtimeclasses"}
	st := strategiesOf(strategies, map[schema.GroupResource]strategy{gr: {Table: runtimeClassTable}})

	// Step 3: its upstream columns, as registry_tables_test.go's
	// upstreamColumns holds them for every served kind.
	upstream := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Handler", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["handler"]},
		{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	}
	if diff := cmp.Diff(upstream, runtimeClassTable.columns); diff != "" {
		t.Errorf("columns (-upstream +workshop):\n%s", diff)
	}

	s := startServer(t)
	if err := s.Serve(resourceOf(k, st)); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s)

	// Served: created and listed.
	c.mustDo(http.StatusCreated, http.MethodPost, "/apis/node.k8s.io/v1/runtimeclasses",
		map[string]any{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": map[string]any{"name": "gvisor"}, "handler": "runsc"})
	list := c.mustDo(http.StatusOK, http.MethodGet, "/apis/node.k8s.io/v1/runtimeclasses", nil)
	if items, _ := list["items"].([]any); len(items) != 1 || str(items[0].(map[string]any), "handler") != "runsc" {
		t.Errorf("list: %v", list)
	}

	// In discovery: client-go's discovery client, which asks for the
	// aggregated documents.
	dc, err := discovery.NewDiscoveryClientForConfig(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	resources, err := dc.ServerResourcesForGroupVersion("node.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range resources.APIResources {
		if r.Name == "runtimeclasses" {
			found = r.Kind == "RuntimeClass" && !r.Namespaced
		}
	}
	if !found {
		t.Errorf("discovery of node.k8s.io/v1: %+v", resources.APIResources)
	}
	groups, err := dc.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(groupNames(groups), "node.k8s.io") {
		t.Errorf("groups: %s", groupNames(groups))
	}

	// Printed as a Table.
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/apis/node.k8s.io/v1/runtimeclasses", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var table metav1.Table
	if err := json.Unmarshal(b, &table); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Table: HTTP %d %v %s", resp.StatusCode, err, b)
	}
	if len(table.Rows) != 1 || len(table.Rows[0].Cells) != 3 || table.Rows[0].Cells[0] != "gvisor" || table.Rows[0].Cells[1] != "runsc" {
		t.Errorf("Table rows: %+v", table.Rows)
	}
}

// runtimeClassTable is the test's printer: runtimeClassColumnDefinitions
// and printRuntimeClass (kubernetes pkg/printers/internalversion/printers.go),
// whose Handler column's description is ObjectMeta's "handler", empty.
var runtimeClassTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Handler", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["handler"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		rc := obj.(*nodev1.RuntimeClass)
		return []any{rc.Name, rc.Handler, age(rc.CreationTimestamp)}
	},
}

func groupNames(groups *metav1.APIGroupList) string {
	var names []string
	for _, g := range groups.Groups {
		names = append(names, g.Name)
	}
	return strings.Join(names, ",")
}
