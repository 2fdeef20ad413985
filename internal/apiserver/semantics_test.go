package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Behaviours no transcript shows, because a real cluster cannot be made to
// show them on demand (410 after compaction, bookmarks on request) or the
// recordings did not ask (paging across namespaces, patch, every resource).
// They follow the Kubernetes API-concepts documentation and the
// kube-apiserver messages.

// TestWatchExpired: after CompactHistory, a watch from an older
// resourceVersion is answered 200 with one ERROR event carrying a 410
// Expired Status, and the stream ends: what kube-apiserver's watch cache
// answers once it no longer holds that resourceVersion. The message is the
// watch cache's, "too old resource version: R (C)", C being the
// resourceVersion compacted to. A watch from C itself is served.
func TestWatchExpired(t *testing.T) {
	c := newCapture(t)
	created := c.s.ResourceVersion()
	c.change(355)
	compacted := c.s.CompactHistory()
	if compacted != c.s.ResourceVersion() {
		t.Errorf("CompactHistory returned %s, want the current %s", compacted, c.s.ResourceVersion())
	}
	got := c.watch("/api/v1/namespaces/capture/pods?watch=true&resourceVersion=" + created).rest()
	want := []frame{{Type: "ERROR", Object: map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": fmt.Sprintf("too old resource version: %s (%s)", created, compacted),
		"reason":  "Expired", "code": float64(410),
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watch from before the compaction (-want +got):\n%s", diff)
	}

	st := c.watch("/api/v1/namespaces/capture/pods?watch=true&resourceVersion=" + compacted)
	c.edit(pods+"db-1", "", func(p map[string]any) { labelsOf(p)["tier"] = "back" })
	if fr := st.next(); fr.Type != "MODIFIED" || str(fr.Object, "metadata", "name") != "db-1" {
		t.Errorf("watch from the compacted resourceVersion: %v, want MODIFIED db-1", shape([]frame{fr}))
	}
}

// TestListExpired: lists at a resourceVersion older than the compaction
// (resourceVersionMatch=Exact, or a continue token) are 410 Expired; at the
// compacted resourceVersion itself they are served, as etcd serves its
// compacted revision.
func TestListExpired(t *testing.T) {
	c := newCapture(t)
	first := c.mustDo(http.StatusOK, http.MethodGet, "/api/v1/namespaces/capture/pods?limit=1", nil)
	c.change(350)
	second := c.mustDo(http.StatusOK, http.MethodGet, "/api/v1/namespaces/capture/pods?limit=2", nil)
	compacted := c.s.CompactHistory()
	c.change(353) // the cluster moves on

	for _, tc := range []struct {
		what, path string
		code       int
	}{
		{"continue from before the compaction", "?limit=1&continue=" + str(first, "metadata", "continue"), http.StatusGone},
		{"exact list from before the compaction", "?resourceVersion=" + str(first, "metadata", "resourceVersion") + "&resourceVersionMatch=Exact", http.StatusGone},
		{"continue at the compacted resourceVersion", "?limit=2&continue=" + str(second, "metadata", "continue"), http.StatusOK},
		{"exact list at the compacted resourceVersion", "?resourceVersion=" + compacted + "&resourceVersionMatch=Exact", http.StatusOK},
	} {
		code, got := c.do(http.MethodGet, "/api/v1/namespaces/capture/pods"+tc.path, nil)
		if code != tc.code {
			t.Errorf("%s: HTTP %d, want %d: %v", tc.what, code, tc.code, got)
			continue
		}
		if code == http.StatusGone && (got["reason"] != "Expired" || got["kind"] != "Status") {
			t.Errorf("%s: %v, want a Status with reason Expired", tc.what, got)
		}
		if code == http.StatusOK && str(got, "metadata", "resourceVersion") != compacted {
			t.Errorf("%s: list at %s, want %s", tc.what, str(got, "metadata", "resourceVersion"), compacted)
		}
	}
}

// TestSendBookmarks: a BOOKMARK at the current resourceVersion, only to
// watches that set allowWatchBookmarks; its object is the watched kind
// with nothing but metadata.resourceVersion.
func TestSendBookmarks(t *testing.T) {
	c := newCapture(t)
	with := c.watch("/api/v1/namespaces/capture/configmaps?watch=true&allowWatchBookmarks=true&resourceVersion=" + c.s.ResourceVersion())
	without := c.watch("/api/v1/namespaces/capture/configmaps?watch=true&resourceVersion=" + c.s.ResourceVersion())
	c.change(350) // a pod changes: no configmap event, but the resourceVersion moves
	if n := c.s.SendBookmarks(); n != 1 {
		t.Errorf("SendBookmarks sent %d, want 1", n)
	}
	c.s.DropWatches()
	want := []frame{{Type: "BOOKMARK", Object: map[string]any{
		"kind": "ConfigMap", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": c.s.ResourceVersion()},
	}}}
	if diff := cmp.Diff(want, with.rest()); diff != "" {
		t.Errorf("with allowWatchBookmarks (-want +got):\n%s", diff)
	}
	if got := without.rest(); len(got) != 0 {
		t.Errorf("without allowWatchBookmarks: %v", shape(got))
	}
}

// TestWatchStreams: a watch answer is a chunked stream, each event written
// and flushed as it happens.
func TestWatchStreams(t *testing.T) {
	c := newCapture(t)
	st := c.watch("/api/v1/namespaces/capture/configmaps?watch=true&resourceVersion=" + c.s.ResourceVersion())
	if te := st.resp.TransferEncoding; len(te) != 1 || te[0] != "chunked" {
		t.Errorf("Transfer-Encoding %v, want chunked", te)
	}
	for i := range 3 {
		name := fmt.Sprintf("cm-%d", i)
		c.mustDo(http.StatusCreated, http.MethodPost, configMaps, configMap(name, ""))
		if fr := st.next(); fr.Type != "ADDED" || str(fr.Object, "metadata", "name") != name {
			t.Errorf("got %v, want ADDED %s", shape([]frame{fr}), name)
		}
	}
}

// TestFieldSelectors: metadata.name, metadata.namespace and, for pods,
// spec.nodeName, on lists and watches; a field a resource does not have is
// a 400 (transcript 09's message).
func TestFieldSelectors(t *testing.T) {
	c := newCapture(t)
	// A pod bound to a node from the start (a pod's nodeName cannot be
	// changed by an update).
	c.mustDo(http.StatusCreated, http.MethodPost, pods, map[string]any{
		"metadata": map[string]any{"name": "bound-1"},
		"spec":     map[string]any{"nodeName": "node-a", "containers": []any{map[string]any{"name": "c", "image": "x"}}},
	})
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a", []string{"bound-1"}},
		{"/api/v1/pods?fieldSelector=spec.nodeName%3D", []string{"db-1", "web-1", "web-2"}}, // not scheduled
		{"/api/v1/pods?fieldSelector=metadata.namespace%3Dcapture,metadata.name!%3Dweb-1", []string{"bound-1", "db-1", "web-2"}},
		{"/api/v1/namespaces/capture/pods?fieldSelector=status.phase%3DPending", []string{"bound-1", "db-1", "web-1", "web-2"}},
		{"/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a", nil},
	} {
		got := c.mustDo(http.StatusOK, http.MethodGet, tc.path, nil)
		var names []string
		for _, it := range got["items"].([]any) {
			names = append(names, str(it.(map[string]any), "metadata", "name"))
		}
		if !cmp.Equal(tc.want, names) {
			t.Errorf("%s: %v, want %v", tc.path, names, tc.want)
		}
	}
	st := c.watch("/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dnode-a")
	c.s.DropWatches()
	if got := shape(st.rest()); !cmp.Equal(got, []string{"ADDED bound-1"}) {
		t.Errorf("watch with spec.nodeName=node-a: %v", got)
	}
	// A kind with no field label conversion of its own has
	// apimachinery's default one, and its wording.
	code, got := c.do(http.MethodGet, "/api/v1/namespaces/capture/configmaps?fieldSelector=spec.nodeName%3Dx", nil)
	if code != http.StatusBadRequest || got["message"] != `"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Errorf("configmaps by spec.nodeName: HTTP %d %v, want 400", code, got)
	}
}

// TestListPagingAcrossNamespaces: across namespaces the continue token's
// start key holds namespace and name, and pages follow namespace, then
// name.
func TestListPagingAcrossNamespaces(t *testing.T) {
	c := newCapture(t)
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "another"}})
	c.mustDo(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/another/pods", []byte(tmpPod))
	var names []string
	path := "/api/v1/pods?limit=2"
	for {
		page := c.mustDo(http.StatusOK, http.MethodGet, path, nil)
		for _, it := range page["items"].([]any) {
			m := it.(map[string]any)
			names = append(names, str(m, "metadata", "namespace")+"/"+str(m, "metadata", "name"))
		}
		tok := str(page, "metadata", "continue")
		if tok == "" {
			break
		}
		if len(names) == 2 && decodeToken(tok)["start"] != "/capture/db-1\x00" {
			t.Errorf("continue token %v, want start /capture/db-1\\x00", decodeToken(tok))
		}
		path = "/api/v1/pods?limit=2&continue=" + tok
	}
	if want := []string{"another/tmp-1", "capture/db-1", "capture/web-1", "capture/web-2"}; !cmp.Equal(want, names) {
		t.Errorf("pages hold %v, want %v", names, want)
	}
}

// TestInvalidListOptions: list options kube-apiserver refuses, with
// apimachinery's own validation (transcript 19 shows one).
func TestInvalidListOptions(t *testing.T) {
	c := newCapture(t)
	for _, tc := range []struct {
		query, field string
	}{
		{"sendInitialEvents=true", "sendInitialEvents"}, // a list, not a watch
		{"resourceVersionMatch=NotOlderThan", "resourceVersionMatch"},
		{"resourceVersion=0&resourceVersionMatch=Exact", "resourceVersionMatch"},
		{"watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1", "resourceVersionMatch"},
	} {
		code, got := c.do(http.MethodGet, "/api/v1/namespaces/capture/pods?"+tc.query, nil)
		causes, _ := got["details"].(map[string]any)["causes"].([]any)
		if code != http.StatusUnprocessableEntity || got["reason"] != "Invalid" || len(causes) == 0 ||
			causes[0].(map[string]any)["field"] != tc.field {
			t.Errorf("%s: HTTP %d %v, want 422 Invalid on %s", tc.query, code, got, tc.field)
		}
	}
	if code, _ := c.do(http.MethodGet, "/api/v1/namespaces/capture/pods?resourceVersion=x", nil); code != http.StatusBadRequest {
		t.Errorf("resourceVersion=x: HTTP %d, want 400", code)
	}
}

// TestPatch: JSON merge, strategic merge and JSON patches are one write
// each; a patch naming a stale resourceVersion is a Conflict.
func TestPatch(t *testing.T) {
	c := newCapture(t)
	for _, tc := range []struct {
		contentType, body, tier string
	}{
		{"application/merge-patch+json", `{"metadata":{"labels":{"tier":"a"}}}`, "a"},
		{"application/strategic-merge-patch+json", `{"metadata":{"labels":{"tier":"b"}}}`, "b"},
		{"application/json-patch+json", `[{"op":"replace","path":"/metadata/labels/tier","value":"c"}]`, "c"},
	} {
		req := c.newRequest(t.Context(), http.MethodPatch, pods+"web-1", []byte(tc.body))
		req.Header.Set("Content-Type", tc.contentType)
		before := c.rv()
		resp, err := c.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := c.mustDo(http.StatusOK, http.MethodGet, pods+"web-1", nil)
		if resp.StatusCode != http.StatusOK || labelsOf(got)["tier"] != tc.tier || c.rv() != before+1 || labelsOf(got)["app"] != "web" {
			t.Errorf("%s: HTTP %d, labels %v, %d writes", tc.contentType, resp.StatusCode, labelsOf(got), c.rv()-before)
		}
	}
	req := c.newRequest(t.Context(), http.MethodPatch, pods+"web-1", []byte(`{"metadata":{"resourceVersion":"1","labels":{"tier":"d"}}}`))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("stale patch: HTTP %d, want 409", resp.StatusCode)
	}
}

// TestEveryResource: each resource of the table serves every verb through
// the same generic code, at its namespaced or cluster-scoped path.
func TestEveryResource(t *testing.T) {
	c := newCapture(t)
	for _, res := range builtinResources() {
		t.Run(res.String(), func(t *testing.T) {
			base := "/api/" + res.GVR.Version
			if res.GVR.Group != "" {
				base = "/apis/" + res.GVR.Group + "/" + res.GVR.Version
			}
			if res.Namespaced {
				base += "/namespaces/capture"
			}
			base += "/" + res.GVR.Resource
			obj := map[string]any{"apiVersion": res.GVR.GroupVersion().String(), "kind": res.Kind, "metadata": map[string]any{"name": "every"}}
			// A pod template needs a container, as kube-apiserver validates it.
			template := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "every"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}}}
			switch res.Kind {
			case "Pod":
				obj["spec"] = map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}}
			case "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job":
				obj["spec"] = map[string]any{
					"selector": map[string]any{"matchLabels": map[string]any{"app": "every"}},
					"template": template,
				}
			case "CronJob":
				obj["spec"] = map[string]any{"schedule": "@daily", "jobTemplate": map[string]any{"spec": map[string]any{"template": template}}}
			case "PodTemplate":
				obj["template"] = template
			case "CertificateSigningRequest":
				request, _ := testCSR(t)
				obj["spec"] = map[string]any{"signerName": "example.com/every", "request": request, "usages": []any{"client auth"}}
			}
			st := c.watch(base + "?watch=true&resourceVersion=" + c.s.ResourceVersion())
			created := c.mustDo(http.StatusCreated, http.MethodPost, base, obj)
			if str(created, "kind") != res.Kind || (str(created, "metadata", "namespace") != "") != res.Namespaced {
				t.Errorf("created %v", created["metadata"])
			}
			got := c.mustDo(http.StatusOK, http.MethodGet, base+"/every", nil)
			labelsOf(got)["edited"] = "yes"
			c.mustDo(http.StatusOK, http.MethodPut, base+"/every", got)
			list := c.mustDo(http.StatusOK, http.MethodGet, base+"?fieldSelector=metadata.name%3Devery", nil)
			if str(list, "kind") != res.Kind+"List" || len(list["items"].([]any)) != 1 {
				t.Errorf("list: %v", list)
			}
			c.mustDo(http.StatusOK, http.MethodDelete, base+"/every", nil)
			c.s.DropWatches()
			want := "ADDED every,MODIFIED every,DELETED every"
			if res.GracefulDelete || res == namespacesResource() {
				want = "ADDED every,MODIFIED every,MODIFIED every,DELETED every"
			}
			if got := strings.Join(shape(st.rest()), ","); got != want {
				t.Errorf("watch: %s, want %s", got, want)
			}
		})
	}
}

// TestDeploymentGenerationOnAnnotations: kube-apiserver's deployment
// strategy bumps metadata.generation when annotations change, not only the
// spec; labels do not (pkg/registry/apps/deployment/strategy.go).
func TestDeploymentGenerationOnAnnotations(t *testing.T) {
	s := startServer(t)
	cs := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}},
			},
		},
	}
	d, err := cs.AppsV1().Deployments("ns").Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		change func(*appsv1.Deployment)
		want   int64
	}{
		{func(d *appsv1.Deployment) { d.Labels = map[string]string{"tier": "front"} }, 1},
		{func(d *appsv1.Deployment) { d.Annotations = map[string]string{"note": "x"} }, 2},
		{func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) }, 3},
	}
	for i, st := range steps {
		st.change(d)
		if d, err = cs.AppsV1().Deployments("ns").Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if d.Generation != st.want {
			t.Errorf("step %d: generation %d, want %d", i, d.Generation, st.want)
		}
	}
}

// TestPodSpecImmutable: a pod's spec may change only in container images,
// activeDeadlineSeconds, added tolerations and removed scheduling gates;
// anything else is 422 Invalid, as kube-apiserver answers.
func TestPodSpecImmutable(t *testing.T) {
	s := startServer(t)
	cs := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		SchedulingGates: []corev1.PodSchedulingGate{{Name: "hold"}},
		Containers:      []corev1.Container{{Name: "c", Image: "nginx:1.27"}},
	}}
	if _, err := cs.CoreV1().Pods("ns").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		change  func(*corev1.Pod)
		invalid bool
	}{
		{"image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" }, false},
		{"added toleration", func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists})
		}, false},
		{"removed gate", func(p *corev1.Pod) { p.Spec.SchedulingGates = nil }, false},
		{"restartPolicy", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }, true},
		{"added gate", func(p *corev1.Pod) { p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "again"}} }, true},
		{"removed toleration", func(p *corev1.Pod) { p.Spec.Tolerations = p.Spec.Tolerations[1:] }, true},
	}
	for _, tt := range tests {
		p, err := cs.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tt.change(p)
		_, err = cs.CoreV1().Pods("ns").Update(ctx, p, metav1.UpdateOptions{})
		if got := apierrors.IsInvalid(err); got != tt.invalid {
			t.Errorf("%s: err = %v, want invalid=%v", tt.name, err, tt.invalid)
		}
	}
}

// TestDefaultTolerationsNotDuplicated: the DefaultTolerationSeconds
// admission plugin adds a toleration only for a taint the pod does not
// tolerate already.
func TestDefaultTolerationsNotDuplicated(t *testing.T) {
	s := startServer(t)
	cs := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	own := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		Tolerations: []corev1.Toleration{own},
		Containers:  []corev1.Container{{Name: "c", Image: "x"}},
	}}
	got, err := cs.CoreV1().Pods("ns").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, tol := range got.Spec.Tolerations {
		keys = append(keys, tol.Key)
	}
	if want := []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}; !cmp.Equal(keys, want) {
		t.Errorf("tolerations %v, want %v", keys, want)
	}
}

// TestInitContainerDefaults: kube-apiserver's container defaults
// (terminationMessagePath, terminationMessagePolicy, imagePullPolicy) are
// filled in init containers as in containers, in a pod and in a template.
func TestInitContainerDefaults(t *testing.T) {
	want := corev1.Container{
		Name: "init", Image: "busybox",
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy:          corev1.PullAlways, // no tag: latest
	}
	spec := func() corev1.PodSpec {
		return corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers:     []corev1.Container{{Name: "app", Image: "app:1"}},
		}
	}
	pod := &corev1.Pod{Spec: spec()}
	defaultPod(pod, metav1.Time{})
	tmpl := spec()
	defaultPodSpec(&tmpl)
	for what, got := range map[string]corev1.Container{"pod": pod.Spec.InitContainers[0], "template": tmpl.InitContainers[0]} {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s init container (-want +got):\n%s", what, diff)
		}
	}
}
