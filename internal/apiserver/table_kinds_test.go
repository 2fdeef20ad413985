package apiserver

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// upstreamColumns are the column definitions of k8s.io/kubernetes
// v1.37.2 pkg/printers/internalversion/printers.go AddHandlers, copied
// as test vectors: name, type and priority of each column ("Name/string/0").
var upstreamColumns = map[schema.GroupResource][]string{
	{Resource: "services"}:               {"Name/string/0", "Type/string/0", "Cluster-IP/string/0", "External-IP/string/0", "Port(s)/string/0", "Age/string/0", "Selector/string/1"},
	{Resource: "secrets"}:                {"Name/string/0", "Type/string/0", "Data/string/0", "Age/string/0"},
	{Resource: "serviceaccounts"}:        {"Name/string/0", "Age/string/0"},
	{Resource: "endpoints"}:              {"Name/string/0", "Endpoints/string/0", "Age/string/0"},
	{Resource: "persistentvolumeclaims"}: {"Name/string/0", "Status/string/0", "Volume/string/0", "Capacity/string/0", "Access Modes/string/0", "StorageClass/string/0", "VolumeAttributesClass/string/0", "Age/string/0", "VolumeMode/string/1"},
	{Group: "apps", Resource: "replicasets"}: {"Name/string/0", "Desired/integer/0", "Current/integer/0", "Ready/integer/0", "Age/string/0",
		"Containers/string/1", "Images/string/1", "Selector/string/1"},
	{Group: "apps", Resource: "statefulsets"}: {"Name/string/0", "Ready/string/0", "Age/string/0", "Containers/string/1", "Images/string/1"},
	{Group: "apps", Resource: "daemonsets"}: {"Name/string/0", "Desired/integer/0", "Current/integer/0", "Ready/integer/0", "Up-to-date/integer/0",
		"Available/integer/0", "Node Selector/string/0", "Age/string/0", "Containers/string/1", "Images/string/1", "Selector/string/1"},
	{Group: "batch", Resource: "jobs"}: {"Name/string/0", "Status/string/0", "Completions/string/0", "Duration/string/0", "Age/string/0",
		"Containers/string/1", "Images/string/1", "Selector/string/1"},
	{Group: "batch", Resource: "cronjobs"}: {"Name/string/0", "Schedule/string/0", "Timezone/string/0", "Suspend/boolean/0", "Active/integer/0",
		"Last Schedule/string/0", "Age/string/0", "Containers/string/1", "Images/string/1", "Selector/string/1"},
	{Group: "coordination.k8s.io", Resource: "leases"}:        {"Name/string/0", "Holder/string/0", "Age/string/0"},
	{Group: "networking.k8s.io", Resource: "ingresses"}:       {"Name/string/0", "Class/string/0", "Hosts/string/0", "Address/string/0", "Ports/string/0", "Age/string/0"},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}: {"Name/string/0", "Pod-Selector/string/0", "Age/string/0"},
	{Group: "policy", Resource: "poddisruptionbudgets"}:       {"Name/string/0", "Min Available/string/0", "Max Unavailable/string/0", "Allowed Disruptions/integer/0", "Age/string/0"},
	{Group: "storage.k8s.io", Resource: "storageclasses"}:     {"Name/string/0", "Provisioner/string/0", "ReclaimPolicy/string/0", "VolumeBindingMode/string/0", "AllowVolumeExpansion/string/0", "Age/string/0"},
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}: {"Name/string/0", "Value/integer/0", "Global-Default/boolean/0", "Age/string/0", "PreemptionPolicy/string/0"},
	{Resource: "events"}: {"Last Seen/string/0", "Type/string/0", "Reason/string/0", "Object/string/0", "Subobject/string/1", "Source/string/1",
		"Message/string/0", "First Seen/string/1", "Count/string/1", "Name/string/1"},
	{Group: "events.k8s.io", Resource: "events"}: {"Last Seen/string/0", "Type/string/0", "Reason/string/0", "Object/string/0", "Subobject/string/1", "Source/string/1",
		"Message/string/0", "First Seen/string/1", "Count/string/1", "Name/string/1"},
	{Group: "discovery.k8s.io", Resource: "endpointslices"}:               {"Name/string/0", "AddressType/string/0", "Ports/string/0", "Endpoints/string/0", "Age/string/0"},
	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}:        {"Name/string/0", "Role/string/0", "Age/string/0", "Users/string/1", "Groups/string/1", "ServiceAccounts/string/1"},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: {"Name/string/0", "Role/string/0", "Age/string/0", "Users/string/1", "Groups/string/1", "ServiceAccounts/string/1"},
}

// TestTableColumns: each kind's columns are upstream's, by name, type
// and priority, each column described, and a row has one cell per column.
func TestTableColumns(t *testing.T) {
	for gr, want := range upstreamColumns {
		var res *Resource
		for _, r := range builtinResources() {
			if r.GVR.GroupResource() == gr {
				res = r
			}
		}
		if res == nil {
			t.Errorf("%v: not served", gr)
			continue
		}
		var got []string
		for _, c := range res.Table.columns {
			got = append(got, fmt.Sprintf("%s/%s/%d", c.Name, c.Type, c.Priority))
			if c.Description == "" {
				t.Errorf("%v: column %s has no description", gr, c.Name)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v columns:\n got %q\nwant %q", gr, got, want)
		}
		obj := res.New()
		metaOf(obj).SetName("x")
		if cells := res.Table.cells(obj, func(metav1.Time) string { return "1s" }); len(cells) != len(want) {
			t.Errorf("%v: %d cells for %d columns: %q", gr, len(cells), len(want), cells)
		}
	}
}

// TestTableKindCells pins a few cells of each printer, as upstream's
// print<Kind> fills them.
func TestTableKindCells(t *testing.T) {
	created := metav1.NewTime(tableCreated)
	now := metav1.NewTime(tableCreated.Add(time.Hour))
	age := func(ts metav1.Time) string { return translateTimestampSince(ts, now) }
	om := metav1.ObjectMeta{Name: "x", CreationTimestamp: created}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "i:1"}, {Name: "b", Image: "i:2"}}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	start := metav1.NewTime(tableCreated.Add(10 * time.Minute))
	for _, tc := range []struct {
		name string
		p    *tablePrinter
		obj  runtime.Object
		want []any
	}{
		{"service ClusterIP", serviceTable, &corev1.Service{ObjectMeta: om, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.0.0.10"},
			Ports:    []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}, {Port: 53, Protocol: corev1.ProtocolUDP}},
			Selector: map[string]string{"app": "x"}}},
			[]any{"x", "ClusterIP", "10.0.0.10", "<none>", "80/TCP,53/UDP", "60m", "app=x"}},
		{"service LoadBalancer pending", serviceTable, &corev1.Service{ObjectMeta: om, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443, NodePort: 30001, Protocol: corev1.ProtocolTCP}}}},
			[]any{"x", "LoadBalancer", "<none>", "<pending>", "443:30001/TCP", "60m", "<none>"}},
		{"service ExternalName", serviceTable, &corev1.Service{ObjectMeta: om, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}},
			[]any{"x", "ExternalName", "<none>", "example.com", "<none>", "60m", "<none>"}},
		{"secret", secretTable, &corev1.Secret{ObjectMeta: om, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": nil, "b": nil}},
			[]any{"x", "Opaque", int64(2), "60m"}},
		{"endpoints", endpointsTable, &corev1.Endpoints{ObjectMeta: om, Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "10.1.0.1"}, {IP: "10.1.0.2"}},
			Ports:     []corev1.EndpointPort{{Port: 80}, {Port: 443}}}}},
			[]any{"x", "10.1.0.1:80,10.1.0.2:80,10.1.0.1:443 + 1 more...", "60m"}},
		{"endpoints none", endpointsTable, &corev1.Endpoints{ObjectMeta: om}, []any{"x", "<none>", "60m"}},
		{"replicaset", replicaSetTable, &appsv1.ReplicaSet{ObjectMeta: om,
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: sel, Template: tmpl},
			Status: appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1}},
			[]any{"x", int64(3), int64(2), int64(1), "60m", "a,b", "i:1,i:2", "app=x"}},
		{"statefulset", statefulSetTable, &appsv1.StatefulSet{ObjectMeta: om,
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Template: tmpl}, Status: appsv1.StatefulSetStatus{ReadyReplicas: 2}},
			[]any{"x", "2/3", "60m", "a,b", "i:1,i:2"}},
		{"daemonset", daemonSetTable, &appsv1.DaemonSet{ObjectMeta: om,
			Spec:   appsv1.DaemonSetSpec{Selector: sel, Template: tmpl},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 4, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 1}},
			[]any{"x", int64(4), int64(3), int64(2), int64(1), int64(0), "<none>", "60m", "a,b", "i:1,i:2", "app=x"}},
		{"job running", jobTable, &batchv1.Job{ObjectMeta: om,
			Spec:   batchv1.JobSpec{Completions: ptr.To[int32](2), Selector: sel, Template: tmpl},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: &start}},
			[]any{"x", "Running", "1/2", "50m", "60m", "a,b", "i:1,i:2", "app=x"}},
		{"job complete", jobTable, &batchv1.Job{ObjectMeta: om,
			Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3)},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: &start, CompletionTime: ptr.To(metav1.NewTime(start.Add(90 * time.Second))),
				Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}},
			[]any{"x", "Complete", "1/1 of 3", "90s", "60m", "", "", "<none>"}},
		{"cronjob", cronJobTable, &batchv1.CronJob{ObjectMeta: om, Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", Suspend: ptr.To(false)}},
			[]any{"x", "*/5 * * * *", "<none>", "False", int64(0), "<none>", "60m", "", "", "<none>"}},
		{"lease", leaseTable, &coordinationv1.Lease{ObjectMeta: om, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me")}},
			[]any{"x", "me", "60m"}},
		{"ingress", ingressTable, &networkingv1.Ingress{ObjectMeta: om, Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{Host: "a"}, {Host: "b"}, {Host: "c"}, {Host: "d"}, {}},
			TLS:   []networkingv1.IngressTLS{{}}},
			Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "1.2.3.4"}, {Hostname: "lb"}}}}},
			[]any{"x", "<none>", "a,b,c + 2 more...", "1.2.3.4,lb", "80, 443", "60m"}},
		{"networkpolicy", networkPolicyTable, &networkingv1.NetworkPolicy{ObjectMeta: om}, []any{"x", "<none>", "60m"}},
		{"pdb", podDisruptionBudgetTable, &policyv1.PodDisruptionBudget{ObjectMeta: om,
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("50%"))}, Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}},
			[]any{"x", "50%", "N/A", int64(1), "60m"}},
		{"pvc bound", persistentVolumeClaimTable, &corev1.PersistentVolumeClaim{ObjectMeta: om,
			Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv1", StorageClassName: ptr.To("std"), VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce},
				Capacity:    corev1.ResourceList{corev1.ResourceStorage: mustQuantity("1Gi")}}},
			[]any{"x", "Bound", "pv1", "1Gi", "RWO,RWX", "std", "<unset>", "60m", "Filesystem"}},
		{"storageclass", storageClassTable, &storagev1.StorageClass{ObjectMeta: om, Provisioner: "p"},
			[]any{"x", "p", "Delete", "Immediate", false, "60m"}},
		{"priorityclass", priorityClassTable, &schedulingv1.PriorityClass{ObjectMeta: om, Value: 1000, PreemptionPolicy: ptr.To(corev1.PreemptNever)},
			[]any{"x", int64(1000), false, "60m", "Never"}},
		{"rolebinding", roleBindingTable, &rbacv1.RoleBinding{ObjectMeta: om, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "u"}, {Kind: "ServiceAccount", Namespace: "ns", Name: "sa"}, {Kind: "User", Name: "v"}}},
			[]any{"x", "ClusterRole/view", "60m", "u, v", "", "ns/sa"}},
		{"event", eventTable, &corev1.Event{ObjectMeta: om, Type: "Normal", Reason: "Scheduled", Message: " placed \n",
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-1", FieldPath: "spec.containers{c}"},
			Source:         corev1.EventSource{Component: "default-scheduler"}, FirstTimestamp: start, LastTimestamp: metav1.NewTime(start.Add(20 * time.Minute)), Count: 3},
			[]any{"30m", "Normal", "Scheduled", "pod/web-1", "spec.containers{c}", "default-scheduler", "placed", "50m", int64(3), "x"}},
		{"events.k8s.io event, singleton", eventTable, &eventsv1.Event{ObjectMeta: om, Type: "Warning", Reason: "Failed", Note: "no",
			Regarding: corev1.ObjectReference{Kind: "Node"}, EventTime: metav1.NewMicroTime(start.Time),
			ReportingController: "kubelet", ReportingInstance: "n1"},
			[]any{"50m", "Warning", "Failed", "node", "", "kubelet, n1", "no", "50m", int64(1), "x"}},
		{"endpointslice", endpointSliceTable, &discoveryv1.EndpointSlice{ObjectMeta: om, AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}, {Name: ptr.To("http")}, {}, {Port: ptr.To[int32](9)}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1"}}, {Addresses: []string{"10.1.0.2"}}}},
			[]any{"x", "IPv4", "80,http,* + 1 more...", "10.1.0.1,10.1.0.2", "60m"}},
		{"endpointslice empty", endpointSliceTable, &discoveryv1.EndpointSlice{ObjectMeta: om, AddressType: discoveryv1.AddressTypeIPv4},
			[]any{"x", "IPv4", "<unset>", "<unset>", "60m"}},
	} {
		if got := tc.p.cells(tc.obj, age); !equalCells(got, tc.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tc.name, got, tc.want)
		}
	}
}

// TestTableStorageClassDefault: a list marks its effective default, the
// most recently created class annotated default; a get does not
// (printStorageClassList, printStorageClass).
func TestTableStorageClassDefault(t *testing.T) {
	s := startServerWith(t, Options{})
	c := metaClient{newClient(t, s)}
	for _, name := range []string{"fast", "slow"} {
		c.mustDo(http.StatusCreated, http.MethodPost, "/apis/storage.k8s.io/v1/storageclasses", map[string]any{
			"metadata":    map[string]any{"name": name, "annotations": map[string]any{"storageclass.kubernetes.io/is-default-class": "true"}},
			"provisioner": "p",
		})
	}
	const accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	names := func(path string) []any {
		resp := c.send(http.MethodGet, path, accept, "", nil)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out []any
		for _, r := range decode(t, b)["rows"].([]any) {
			out = append(out, r.(map[string]any)["cells"].([]any)[0])
		}
		return out
	}
	// Same creationTimestamp (the fixed clock): the first name wins.
	if got := names("/apis/storage.k8s.io/v1/storageclasses"); fmt.Sprint(got) != "[fast (default) slow]" {
		t.Errorf("list: %v", got)
	}
	if got := names("/apis/storage.k8s.io/v1/storageclasses/fast"); fmt.Sprint(got) != "[fast]" {
		t.Errorf("get: %v", got)
	}
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
