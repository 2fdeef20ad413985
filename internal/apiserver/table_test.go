package apiserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Table answers (table.go), against what kube-apiserver v1.36.3 answered
// kubectl get (transcripts 52-58): namespace capture-table with a gated
// pod web-1, a configmap app with two keys, and a deployment web whose
// two pods kube-controller-manager made. The workshop cluster has no
// controllers, so the test makes what they made, with their field
// manager, from the objects transcript 57 recorded in full.

// clock is a settable server clock: the objects are made at the recorded
// creationTimestamp and read 2 s later, so Age reads "2s" as recorded.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

var tableCreated = time.Date(2026, time.November, 22, 22, 22, 0, 0, time.UTC)

// newTableCapture makes the recorded state of namespace capture-table.
func newTableCapture(t *testing.T) (metaClient, *clock) {
	t.Helper()
	clk := &clock{now: tableCreated}
	s := startServerWith(t, Options{Now: clk.Now})
	c := metaClient{newClient(t, s)}
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces",
		map[string]any{"metadata": map[string]any{"name": "capture-table"}})

	// The pods, as their writers sent them: what 57 recorded, less what
	// the server sets.
	var full map[string]any
	if err := json.Unmarshal(transcript(t, "57-table-pods-includeobject")[0].Body, &full); err != nil {
		t.Fatal(err)
	}
	for _, row := range full["rows"].([]any) {
		pod := row.(map[string]any)["object"].(map[string]any)
		md := pod["metadata"].(map[string]any)
		manager := md["managedFields"].([]any)[0].(map[string]any)["manager"].(string)
		for _, k := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"} {
			delete(md, k)
		}
		delete(pod, "status")
		for _, k := range []string{"tolerations", "priority", "preemptionPolicy"} { // admission's
			delete(pod["spec"].(map[string]any), k)
		}
		c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/capture-table/pods?fieldManager="+manager, pod)
	}

	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/capture-table/configmaps",
		map[string]any{"metadata": map[string]any{"name": "app"}, "data": map[string]any{"a": "1", "c": "2"}})
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/capture-table/configmaps?fieldManager=kube-controller-manager",
		map[string]any{"metadata": map[string]any{"name": "kube-root-ca.crt", "annotations": map[string]any{
			"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.",
		}}, "data": map[string]any{"ca.crt": "-----BEGIN CERTIFICATE-----"}})

	// The deployment as kubectl apply created it, then the status
	// kube-controller-manager wrote: 2 pods, none ready.
	applied := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app":"web"},"name":"web","namespace":"capture-table"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.27","name":"c"}]}}}}`
	var d map[string]any
	_ = json.Unmarshal([]byte(applied), &d)
	d["metadata"].(map[string]any)["annotations"] = map[string]any{
		"deployment.kubernetes.io/revision":                "1",
		"kubectl.kubernetes.io/last-applied-configuration": applied + "\n",
	}
	dep := c.mustDo(http.StatusCreated, http.MethodPost, "/apis/apps/v1/namespaces/capture-table/deployments?fieldManager=kubectl-client-side-apply", d)
	dep["status"] = map[string]any{"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "unavailableReplicas": 2, "terminatingReplicas": 0}
	c.mustDo(http.StatusOK, http.MethodPut, "/apis/apps/v1/namespaces/capture-table/deployments/web/status?fieldManager=kube-controller-manager", dep)

	clk.Set(tableCreated.Add(2 * time.Second))
	return c, clk
}

// withoutManagedFields drops the managedFields of the table rows' objects
// named: the deployment's, which kube-controller-manager wrote through
// /status together with an annotation (a deployment's status strategy
// lets annotations through), a path the workshop cluster does not copy.
func withoutManagedFields(table map[string]any, names ...string) map[string]any {
	rows, _ := table["rows"].([]any)
	for _, r := range rows {
		obj, _ := r.(map[string]any)["object"].(map[string]any)
		md, _ := obj["metadata"].(map[string]any)
		for _, n := range names {
			if md != nil && md["name"] == n {
				delete(md, "managedFields")
			}
		}
	}
	return table
}

// TestTable: lists, a get and includeObject=Object answer the recorded
// Tables: the same columns, cells and row objects.
// transcripts 52-table-pods, 53-table-pod-get, 54-table-deployments,
// 55-table-configmaps, 56-table-namespaces, 57-table-pods-includeobject
func TestTable(t *testing.T) {
	c, _ := newTableCapture(t)
	for _, name := range []string{
		"52-table-pods", "53-table-pod-get", "54-table-deployments",
		"55-table-configmaps", "56-table-namespaces", "57-table-pods-includeobject",
	} {
		ex := transcript(t, name)[0]
		resp := c.send(ex.Method, ex.Path, ex.Accept, "", nil)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != ex.Code || resp.Header.Get("Content-Type") != ex.Header.Get("content-type") {
			t.Errorf("%s: HTTP %d %q, want %d %q: %s", name, resp.StatusCode, resp.Header.Get("Content-Type"), ex.Code, ex.Header.Get("content-type"), got)
		}
		sameJSON(t, name, withoutManagedFields(decode(t, got), "web"), withoutManagedFields(decode(t, ex.Body), "web"))
	}
}

// TestTableWatch: a watch asked for as Table sends each event as a Table
// of one row, the columns with the first event only; a pod being deleted
// reads Terminating.
// transcript 58-table-watch-pods
func TestTableWatch(t *testing.T) {
	c, clk := newTableCapture(t)
	ex := transcript(t, "58-table-watch-pods")[0]
	path := strings.Split(ex.Path, "?")[0] + "?watch=true&resourceVersion=" + c.s.ResourceVersion()
	ctx, cancel := context.WithCancel(context.Background())
	req := c.newRequest(ctx, http.MethodGet, path, nil)
	req.Header.Set("Accept", ex.Accept)
	resp, err := c.c.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w := c.stream(resp, cancel)

	// The recorded changes, 4 s after creation: web-1's phase through
	// /status, then a delete with grace 0.
	clk.Set(tableCreated.Add(4 * time.Second))
	pod := c.mustDo(http.StatusOK, http.MethodGet, "/api/v1/namespaces/capture-table/pods/web-1", nil)
	pod["status"].(map[string]any)["phase"] = "Running"
	c.mustDo(http.StatusOK, http.MethodPut, "/api/v1/namespaces/capture-table/pods/web-1/status", pod)
	c.mustDo(http.StatusOK, http.MethodDelete, "/api/v1/namespaces/capture-table/pods/web-1",
		metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})

	for i, want := range ex.Events {
		got := w.next()
		if got.Type != want.Type {
			t.Fatalf("event %d: %s, want %s", i, got.Type, want.Type)
		}
		sameJSON(t, "event "+want.Type, got.Object, want.Object)
	}
}

// TestTableOptions: includeObject=None leaves the rows' objects out, a
// bad value is kube-apiserver's 400, and a v1beta1 Table is served.
func TestTableOptions(t *testing.T) {
	c, _ := newTableCapture(t)
	get := func(path, accept string) (int, map[string]any) {
		resp := c.send(http.MethodGet, path, accept, "", nil)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, decode(t, b)
	}
	const v1 = "application/json;as=Table;v=v1;g=meta.k8s.io"
	code, table := get("/api/v1/namespaces/capture-table/configmaps?includeObject=None", v1)
	if rows := table["rows"].([]any); code != http.StatusOK || len(rows) != 2 || rows[0].(map[string]any)["object"] != nil {
		t.Errorf("includeObject=None: HTTP %d, %v", code, table)
	}
	code, status := get("/api/v1/namespaces/capture-table/configmaps?includeObject=All", v1)
	want := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`,
		"reason":  "BadRequest", "code": float64(400)}
	if code != http.StatusBadRequest {
		t.Errorf("includeObject=All: HTTP %d, want 400", code)
	}
	sameJSON(t, "includeObject=All", status, want)
	_, table = get("/api/v1/namespaces/capture-table/configmaps", "application/json;as=Table;v=v1beta1;g=meta.k8s.io")
	if table["apiVersion"] != "meta.k8s.io/v1beta1" || table["kind"] != "Table" {
		t.Errorf("v1beta1: %v %v", table["apiVersion"], table["kind"])
	}
}

// TestTableCells pins printPod's Status and Restarts rules beyond the
// recordings, and a node's row.
func TestTableCells(t *testing.T) {
	now := metav1.NewTime(tableCreated.Add(time.Hour))
	age := func(ts metav1.Time) string { return translateTimestampSince(ts, now) }
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want []any
	}{
		{"running and ready", corev1.Pod{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}, NodeName: "n1"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "a", Ready: true, State: running}, {Name: "b", State: running}}},
		}, []any{"", "1/2", "Running", "0", "<unknown>", "10.0.0.1", "n1", "<none>", "<none>"}},
		{"crash loop, restarted", corev1.Pod{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
				Name: "a", RestartCount: 3,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(tableCreated.Add(59 * time.Minute))}},
			}}},
		}, []any{"", "0/1", "CrashLoopBackOff", "3 (60s ago)", "<unknown>", "<none>", "<none>", "<none>", "<none>"}},
		{"init container waiting", corev1.Pod{
			Spec:   corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i"}}, Containers: []corev1.Container{{Name: "a"}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: "i"}}},
		}, []any{"", "0/1", "Init:0/1", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"}},
		{"readiness gates", corev1.Pod{
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}, ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "x"}, {ConditionType: "y"}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: "x", Status: corev1.ConditionTrue}}},
		}, []any{"", "0/1", "Pending", "0", "<unknown>", "<none>", "<none>", "<none>", "1/2"}},
	} {
		if got := podCells(&tc.pod, age); !equalCells(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", CreationTimestamp: metav1.NewTime(tableCreated),
			Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}},
		Spec: corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.2"}},
			NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.36.3"}},
	}
	want := []any{"n1", "NotReady,SchedulingDisabled", "control-plane", "60m", "v1.36.3", "10.0.0.2", "<none>", "<unknown>", "<unknown>", "<unknown>"}
	if got := nodeTable.cells(node, age); !equalCells(got, want) {
		t.Errorf("node: %q, want %q", got, want)
	}
}

func equalCells(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
