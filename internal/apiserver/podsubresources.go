package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// The pods' binding and eviction subresources: POST .../pods/{name}/binding
// (what the scheduler sends) and POST .../pods/{name}/eviction (kubectl
// drain). Both copy kube-apiserver's own REST storage, kubernetes v1.37.2
// pkg/registry/core/pod/storage: BindingREST (storage.go) and
// EvictionREST (eviction.go). Both answer a Status, 201.

// bindingResource and evictionResource describe the kinds the two
// subresources take, for decoding; neither is a resource of its own.
var (
	bindingResource = &Resource{
		GVR: corev1.SchemeGroupVersion.WithResource("bindings"), Kind: "Binding", Namespaced: true,
		New: func() runtime.Object { return &corev1.Binding{} },
	}
	evictionResource = &Resource{
		GVR: policyv1.SchemeGroupVersion.WithResource("evictions"), Kind: "Eviction", Namespaced: true,
		New: func() runtime.Object { return &policyv1.Eviction{} },
	}
)

// podSubresource reports whether sub is a subresource of pods served here.
func podSubresource(res *Resource, sub string) bool {
	return res.GVR == podsGVR && (sub == "binding" || sub == "eviction")
}

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// servePodSubresource answers a POST of a Binding or an Eviction.
func (s *Server) servePodSubresource(rw responder, r *http.Request, req request) {
	sub := &bindingResource
	if req.subresource == "eviction" {
		sub = &evictionResource
	}
	rw.res = *sub
	if req.verb != "create" {
		rw.error(apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/" + req.subresource}, r.Method))
		return
	}
	opts := &metav1.CreateOptions{}
	dry, err := writeOptions(r.URL.Query(), opts)
	var obj runtime.Object
	if err == nil {
		obj, err = decodeBody(rw.w, r, *sub)
	}
	if err != nil {
		rw.error(err)
		return
	}
	ctx, warnings := withAdmission(r.Context(), opts) // admission: the options, its warnings
	var st *metav1.Status
	if b, ok := obj.(*corev1.Binding); ok {
		err = s.store.bind(ctx, req.namespace, req.name, b, dry)
	} else {
		st, err = s.store.evict(ctx, req.namespace, req.name, obj.(*policyv1.Eviction), dry)
	}
	warn(rw.w, *warnings)
	switch {
	case err != nil:
		rw.error(err)
	case st != nil:
		rw.status(int(st.Code), st)
	default:
		rw.status(http.StatusCreated, &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated})
	}
}

// bind is BindingREST.Create: the pod, if it is on no node, not being
// deleted and not gated, gets the Binding's node, its annotations and
// labels, and the condition PodScheduled=True. The write goes to the
// storage directly, as kube-apiserver's does: no field manager, no
// generation. Admission sees the Binding (a CREATE of pods/binding):
// mutating admission first (the create handler's), validating admission
// after the checks of the Binding itself (BindingREST.Create's
// createValidation), before the pod is read.
func (s *store) bind(ctx context.Context, namespace, name string, b *corev1.Binding, dry bool) error {
	defer s.lock(dry)()
	s.admitting(ctx) // admission: a client's write
	adm := s.takeAdmission()
	res := s.reg.lookup(podsGVR)
	if err := s.admitSubresource(adm, false, "CREATE", res, "binding", namespace, name, b, nil, nil); err != nil {
		return err
	}
	if b.Name != name {
		return apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	// ValidatePodBinding; kube-apiserver returns its errors as a plain
	// aggregate, which the handler answers 500.
	var errs field.ErrorList
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	if len(errs) > 0 {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
			Code: http.StatusInternalServerError, Message: errs.ToAggregate().Error()}}
	}
	if err := s.admitSubresource(adm, true, "CREATE", res, "binding", namespace, name, b, nil, nil); err != nil {
		return err
	}
	old, ok := s.objects[res][objectKey(namespace, name)]
	if !ok {
		return apierrors.NewNotFound(res.GroupResource(), name)
	}
	pod := old.DeepCopyObject().(*corev1.Pod)
	if err := preconditions(pod, string(b.UID), b.ResourceVersion); err != nil {
		return err
	}
	conflict := func(format string, args ...any) error {
		return apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, name, fmt.Errorf(format, args...))
	}
	switch {
	case pod.DeletionTimestamp != nil:
		return conflict("pod %s is being deleted, cannot be assigned to a host", pod.Name)
	case pod.Spec.NodeName != "":
		return conflict("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
	case len(pod.Spec.SchedulingGates) != 0:
		return conflict("pod %v has non-empty .spec.schedulingGates", pod.Name)
	}
	pod.Spec.NodeName = b.Target.Name
	pod.Status.NominatedNodeName = "" // ClearingNominatedNodeNameAfterBinding, on by default
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	for k, v := range b.Annotations {
		pod.Annotations[k] = v
	}
	if len(b.Labels) > 0 { // PodTopologyLabelsAdmission, on by default
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		for k, v := range b.Labels {
			pod.Labels[k] = v
		}
	}
	s.setPodCondition(pod, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	return s.commit(res, watch.Modified, pod, old)
}

// preconditions is the storage's check of a binding's UID and
// resourceVersion preconditions (storage.Preconditions.Check), a 409.
func preconditions(pod *corev1.Pod, uid, rv string) error {
	switch {
	case uid != "" && uid != string(pod.UID):
		return apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, pod.Name,
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, pod.UID))
	case rv != "" && rv != pod.ResourceVersion:
		return apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, pod.Name,
			fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", rv, pod.ResourceVersion))
	}
	return nil
}

// setPodCondition is podutil.UpdatePodCondition (kubernetes
// pkg/api/pod/util.go): the condition replaces the pod's of its type,
// with a new transition time only if its status changed.
func (s *store) setPodCondition(pod *corev1.Pod, c corev1.PodCondition) {
	c.LastTransitionTime = s.now()
	for i, old := range pod.Status.Conditions {
		if old.Type == c.Type {
			if old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
			pod.Status.Conditions[i] = c
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}

// evict is EvictionREST.Create. A pod that is pending, terminal or being
// deleted is deleted at once; otherwise the one PodDisruptionBudget that
// selects it must allow a disruption (one is taken from it), else 429.
// With no controller-manager here, a PodDisruptionBudget's status is
// never computed: one that selects a running pod refuses its eviction as
// "still being processed", as it does on a kube-apiserver without one.
//
// Admission sees the Eviction (a CREATE of pods/eviction): mutating
// admission first (the create handler's), validating admission after the
// name's check (EvictionREST.Create's createValidation); the pod's
// delete that follows is not admitted (rest.ValidateAllObjectFunc).
func (s *store) evict(ctx context.Context, namespace, name string, ev *policyv1.Eviction, dry bool) (*metav1.Status, error) {
	opts := ev.DeleteOptions
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	dry = dry || len(opts.DryRun) > 0
	defer s.lock(dry)()
	s.admitting(ctx) // admission: a client's write
	adm := s.takeAdmission()
	res := s.reg.lookup(podsGVR)
	if err := s.admitSubresource(adm, false, "CREATE", res, "eviction", namespace, name, ev, nil, nil); err != nil {
		return nil, err
	}
	if ev.Name != name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if err := s.admitSubresource(adm, true, "CREATE", res, "eviction", namespace, name, ev, nil, nil); err != nil {
		return nil, err
	}
	obj, ok := s.objects[res][objectKey(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(res.GroupResource(), name)
	}
	pod := obj.(*corev1.Pod)
	phase := pod.Status.Phase
	if phase == corev1.PodSucceeded || phase == corev1.PodFailed || phase == corev1.PodPending || pod.DeletionTimestamp != nil {
		return nil, s.evictDelete(res, pod, opts)
	}

	pdbs := s.reg.lookup(policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"))
	var matching []*policyv1.PodDisruptionBudget
	objs := s.objects[pdbs]
	for _, key := range sortedKeys(objs) {
		pdb := objs[key].(*policyv1.PodDisruptionBudget)
		if pdb.Namespace != namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		matching = append(matching, pdb)
	}
	switch len(matching) {
	case 0:
		return nil, s.evictDelete(res, pod, opts)
	case 1:
	default:
		return &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}, nil
	}
	pdb := matching[0].DeepCopy()
	if !podReady(pod) {
		policy := pdb.Spec.UnhealthyPodEvictionPolicy
		if (policy != nil && *policy == policyv1.AlwaysAllow) ||
			(pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0) {
			return nil, s.evictDelete(res, pod, opts)
		}
	}
	if err := checkDisruptionBudget(pdb); err != nil {
		return nil, err
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		apimeta.SetStatusCondition(&pdb.Status.Conditions, metav1.Condition{
			Type: policyv1.DisruptionAllowedCondition, Reason: policyv1.InsufficientPodsReason,
			Status: metav1.ConditionFalse, ObservedGeneration: pdb.Status.ObservedGeneration,
		})
	}
	if !dry {
		if pdb.Status.DisruptedPods == nil {
			pdb.Status.DisruptedPods = map[string]metav1.Time{}
		}
		pdb.Status.DisruptedPods[pod.Name] = s.now()
		// kube-apiserver writes it through its loopback client.
		if _, err := s.updateLocked(pdbs, namespace, pdb.Name, "status", "kube-apiserver", pdb, false); err != nil {
			return nil, err
		}
	}
	return nil, s.evictDelete(res, pod, opts)
}

// checkDisruptionBudget is EvictionREST's checkAndDecrement, but for the
// decrement: whether pdb allows one more disruption, worded as
// kube-apiserver words its refusals.
func checkDisruptionBudget(pdb *policyv1.PodDisruptionBudget) error {
	refuse := func(retryAfter int, msg string) error {
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", retryAfter)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: msg})
		return err
	}
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return refuse(10, fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name))
	case pdb.Status.DisruptionsAllowed < 0:
		err := apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, pdb.Name, errors.New("pdb disruptions allowed is negative"))
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
			Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: pdb disruptions allowed is negative", pdb.Name)})
		return err
	case pdb.Status.DisruptionsAllowed > 0:
		return nil
	}
	c := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	switch {
	case c != nil && c.Status == metav1.ConditionFalse && c.Message != "" && c.Reason == policyv1.SyncFailedReason:
		return refuse(0, fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, c.Message))
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		return refuse(0, fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy))
	case c != nil && c.Status == metav1.ConditionFalse && c.Message != "":
		return refuse(0, fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, c.Reason, c.Message))
	}
	return refuse(0, fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name))
}

// podReady is podutil.IsPodReady: the Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// evictDelete is addConditionAndDeletePod: the pod gets the condition
// DisruptionTarget=True (a write of its own, unless a dry run), then is
// deleted. The eviction's delete preconditions hold for both.
func (s *store) evictDelete(res *Resource, pod *corev1.Pod, opts *metav1.DeleteOptions) error {
	if p := opts.Preconditions; p != nil {
		conflict := func(format string, args ...any) error {
			return apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, pod.Name, fmt.Errorf(format, args...))
		}
		if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
			return conflict("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, pod.UID)
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
			return conflict("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, pod.ResourceVersion)
		}
	}
	if !s.dry {
		next := pod.DeepCopy()
		s.setPodCondition(next, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"})
		if err := s.commit(res, watch.Modified, next, pod); err != nil {
			return err
		}
	}
	_, err := s.deleteLocked(res, pod.Namespace, pod.Name)
	return err
}
