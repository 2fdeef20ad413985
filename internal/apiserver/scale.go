package apiserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The scale subresource: .../deployments/{name}/scale reads and writes a
// deployment's spec.replicas as an autoscaling/v1 Scale, which is what
// kubectl scale (and a HorizontalPodAutoscaler) speak. It copies
// kube-apiserver's deployment ScaleREST
// (kubernetes/pkg/registry/apps/deployment/storage/storage.go):
// scaleFromDeployment for the answer, and for a write the same steps as
// its scaleUpdatedObjectInfo: the deployment's managedFields become the
// Scale's through apimachinery's ScaleHandler, the write is recorded on
// the Scale by a FieldManager for the Scale kind, and ScaleHandler maps
// the result back, so that the writer owns spec.replicas with
// subresource "scale".

// scaleResource describes the Scale kind, for decoding and encoding; it is
// no resource of its own (not in resources).
var scaleResource = &Resource{
	GVR:  autoscalingv1.SchemeGroupVersion.WithResource("scale"),
	Kind: "Scale",
	New:  func() runtime.Object { return &autoscalingv1.Scale{} },
}

// replicasPaths is where a deployment keeps its replicas, per apiVersion
// (upstream's replicasPathInDeployment).
var replicasPaths = managedfields.ResourcePathMappings{
	appsv1.SchemeGroupVersion.String(): fieldpath.MakePathOrDie("spec", "replicas"),
}

// serveScale answers GET, PUT and PATCH of a scale subresource.
func (s *Server) serveScale(rw responder, r *http.Request, req request) {
	rw.res = scaleResource
	if rw.as != nil && rw.as.kind == asTable {
		rw.as = nil // a Scale has no columns here: answer the Scale itself
	}
	manager := fieldManager(r)
	switch req.verb {
	case "get":
		sc, err := s.store.getScale(req.res, req.namespace, req.name)
		rw.respond(http.StatusOK, sc, err)
	case "update":
		obj, err := decodeBody(rw.w, r, scaleResource)
		if err == nil {
			obj, err = s.store.updateScale(req.res, req.namespace, req.name, manager, func(*autoscalingv1.Scale) (runtime.Object, error) {
				return obj, nil
			})
		}
		rw.respond(http.StatusOK, obj, err)
	case "patch":
		patchBytes, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
		if err != nil {
			rw.error(apierrors.NewBadRequest(err.Error()))
			return
		}
		obj, err := s.store.updateScale(req.res, req.namespace, req.name, manager, func(cur *autoscalingv1.Scale) (runtime.Object, error) {
			curJSON, err := json.Marshal(typed(cur, scaleResource))
			if err != nil {
				return nil, err
			}
			return applyPatch(rw.w, r, curJSON, patchBytes, scaleResource)
		})
		rw.respond(http.StatusOK, obj, err)
	default:
		rw.error(apierrors.NewMethodNotSupported(schema.GroupResource{Group: req.res.GVR.Group, Resource: req.res.GVR.Resource + "/scale"}, r.Method))
	}
}

// scaleOf is upstream's scaleFromDeployment.
func scaleOf(d *appsv1.Deployment) (*autoscalingv1.Scale, error) {
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, err
	}
	var replicas int32
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: d.Name, Namespace: d.Namespace, UID: d.UID,
			ResourceVersion: d.ResourceVersion, CreationTimestamp: d.CreationTimestamp,
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: replicas},
		Status: autoscalingv1.ScaleStatus{Replicas: d.Status.Replicas, Selector: selector.String()},
	}, nil
}

// scaleNotFound is upstream's answer for the scale of a missing object:
// it names the subresource, "deployments/scale.apps".
func scaleNotFound(res *Resource, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Group: res.GVR.Group, Resource: res.GVR.Resource + "/scale"}, name)
}

func (s *store) getScale(res *Resource, namespace, name string) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[res][objectKey(namespace, name)]
	if !ok {
		return nil, scaleNotFound(res, name)
	}
	return scaleOf(obj.(*appsv1.Deployment))
}

// updateScale writes a deployment's replicas through its Scale. change
// turns the current Scale into the one to write (the PUT's body, or the
// patched Scale).
func (s *store) updateScale(res *Resource, namespace, name, manager string, change func(*autoscalingv1.Scale) (runtime.Object, error)) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[res][objectKey(namespace, name)]
	if !ok {
		return nil, scaleNotFound(res, name)
	}
	d := obj.(*appsv1.Deployment).DeepCopy()
	handler := managedfields.NewScaleHandler(d.ManagedFields, appsv1.SchemeGroupVersion, replicasPaths)
	old, err := scaleOf(d)
	if err != nil {
		return nil, err
	}
	if old.ManagedFields, err = handler.ToSubresource(); err != nil {
		return nil, err
	}
	next, err := change(old.DeepCopy())
	if err != nil {
		return nil, err
	}
	sc, ok := next.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected input object type to be Scale, but %T", next))
	}
	if sc.Name != name {
		return nil, apierrors.NewBadRequest("the name of the object (" + sc.Name + ") does not match the name on the URL (" + name + ")")
	}
	// Upstream's ValidateScale, then the UID precondition.
	if sc.Spec.Replicas < 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: scaleResource.GVR.Group, Kind: scaleResource.Kind}, name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0"),
		})
	}
	if sc.UID != "" && sc.UID != d.UID {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: res.GVR.Group, Resource: res.GVR.Resource + "/scale"}, name,
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", sc.UID, d.UID))
	}
	sc = s.manageFields(scaleResource, "scale", old, sc, manager).(*autoscalingv1.Scale)

	d.Spec.Replicas = &sc.Spec.Replicas
	d.ResourceVersion = sc.ResourceVersion
	entries, err := handler.ToParent(sc.ManagedFields)
	if err != nil {
		return nil, err
	}
	d.ManagedFields = restamp(d.ManagedFields, entries, s.now())
	updated, err := s.updateLocked(res, namespace, name, "", manager, d, true)
	if err != nil {
		return nil, err
	}
	return scaleOf(updated.(*appsv1.Deployment))
}
