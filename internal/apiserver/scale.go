package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The scale subresource: .../deployments/{name}/scale (replicasets and
// statefulsets alike) reads and writes a deployment's spec.replicas as an autoscaling/v1 Scale, which is what
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

// replicasPaths is where res keeps its replicas, per apiVersion
// (upstream's replicasPathInDeployment, and the same for replicasets
// and statefulsets): .spec.replicas. For a custom resource, every
// version of its CRD is mapped, nil where a version has no scale
// subresource, as apiextensions-apiserver's replicasPathInCustomResource:
// ScaleHandler.ToParent drops the entries of an apiVersion it does not
// know, so a scale write through one version would drop what managers
// wrote through another.
func replicasPaths(res *Resource) managedfields.ResourcePathMappings {
	if res.Hooks != nil && res.Hooks.ScaleReplicas != nil {
		path := func(p string) fieldpath.Path {
			if p == "" {
				return nil
			}
			var parts []any
			for _, f := range jsonPath(p) {
				parts = append(parts, f)
			}
			return fieldpath.MakePathOrDie(parts...)
		}
		out := managedfields.ResourcePathMappings{}
		for apiVersion, p := range res.Hooks.ScaleReplicas.SpecByVersion {
			out[apiVersion] = path(p)
		}
		out[res.GVR.GroupVersion().String()] = path(res.Hooks.ScaleReplicas.Spec)
		return out
	}
	return managedfields.ResourcePathMappings{
		res.GVR.GroupVersion().String(): fieldpath.MakePathOrDie("spec", "replicas"),
	}
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
		opts := &metav1.UpdateOptions{}
		dry, err := writeOptions(r.URL.Query(), opts)
		var obj runtime.Object
		if err == nil {
			obj, err = decodeBody(rw.w, r, scaleResource)
		}
		if err == nil {
			ctx, warnings := withAdmission(r.Context(), opts) // admission: the options, its warnings
			obj, err = s.store.updateScale(ctx, req.res, req.namespace, req.name, manager, dry, func(*autoscalingv1.Scale) (runtime.Object, error) {
				return obj, nil
			}, false)
			warn(rw.w, *warnings)
		}
		rw.respond(http.StatusOK, obj, err)
	case "patch":
		patchBytes, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
		if err != nil {
			rw.error(apierrors.NewBadRequest(err.Error()))
			return
		}
		patchType := types.PatchType(strings.Split(r.Header.Get("Content-Type"), ";")[0])
		opts, err := parsePatchOptions(r.URL.Query(), patchType)
		if err != nil {
			rw.error(err)
			return
		}
		ctx, warnings := withAdmission(r.Context(), nil) // admission: its warnings
		defer warn(rw.w, *warnings)
		if patchType == types.ApplyYAMLPatchType {
			// A server-side apply of the Scale: kube-apiserver's
			// applyPatcher runs the Scale's FieldManager.Apply on
			// the Scale made from the object, then the same
			// scaleUpdatedObjectInfo as any other write.
			intent, err := applyIntent(patchBytes)
			if err != nil {
				rw.error(err)
				return
			}
			force := opts.Force != nil && *opts.Force
			obj, err := s.store.updateScale(ctx, req.res, req.namespace, req.name, manager, len(opts.DryRun) > 0, func(cur *autoscalingv1.Scale) (runtime.Object, error) {
				cur.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
				out, err := s.store.fieldManager(scaleResource, "scale").Apply(cur, intent, manager, force)
				if err != nil {
					return nil, applyError(err)
				}
				clearTypeMeta(out)
				return out, nil
			}, true)
			rw.respond(http.StatusOK, obj, err)
			return
		}
		obj, err := s.store.updateScale(ctx, req.res, req.namespace, req.name, manager, len(opts.DryRun) > 0, func(cur *autoscalingv1.Scale) (runtime.Object, error) {
			curJSON, err := json.Marshal(typed(cur, scaleResource))
			if err != nil {
				return nil, err
			}
			return applyPatch(rw.w, r, curJSON, patchBytes, scaleResource)
		}, false)
		rw.respond(http.StatusOK, obj, err)
	default:
		rw.error(apierrors.NewMethodNotSupported(schema.GroupResource{Group: req.res.GVR.Group, Resource: req.res.GVR.Resource + "/scale"}, r.Method))
	}
}

// scaled is what a Scale reads of a kind with the scale subresource
// (deployments, replicasets, statefulsets: each has .spec.replicas,
// .spec.selector and .status.replicas).
type scaled struct {
	replicas       **int32
	selector       *metav1.LabelSelector
	statusReplicas int32
}

func scaledOf(obj runtime.Object) scaled {
	v := reflect.ValueOf(obj).Elem()
	spec, status := v.FieldByName("Spec"), v.FieldByName("Status")
	return scaled{
		replicas:       spec.FieldByName("Replicas").Addr().Interface().(**int32),
		selector:       spec.FieldByName("Selector").Interface().(*metav1.LabelSelector),
		statusReplicas: int32(status.FieldByName("Replicas").Int()),
	}
}

// scaleOf is upstream's scaleFromDeployment (scaleFromReplicaSet,
// scaleFromStatefulSet alike).
func scaleOf(res *Resource, obj runtime.Object) (*autoscalingv1.Scale, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return scaleOfCustom(res, u)
	}
	sc := scaledOf(obj)
	selector, err := metav1.LabelSelectorAsSelector(sc.selector)
	if err != nil {
		return nil, err
	}
	var replicas int32
	if *sc.replicas != nil {
		replicas = **sc.replicas
	}
	m := metaOf(obj)
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: replicas},
		Status: autoscalingv1.ScaleStatus{Replicas: sc.statusReplicas, Selector: selector.String()},
	}, nil
}

// scaleNotFound is upstream's answer for the scale of a missing object:
// the error of the object's own store, which names the resource, not the
// subresource: `deployments.apps "nope" not found` (ScaleREST.Get and
// the update's GuaranteedUpdate in kubernetes v1.37.2
// pkg/registry/apps/deployment/storage/storage.go, and
// apiextensions-apiserver's ScaleREST alike; so kube-apiserver v1.37.2
// answered a GET, PUT, merge patch and apply, hack/realk8s).
func scaleNotFound(res *Resource, name string) error {
	return apierrors.NewNotFound(res.GroupResource(), name)
}

func (s *store) getScale(res *Resource, namespace, name string) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServed(res); err != nil {
		return nil, err
	}
	obj, ok := s.objects[storageOf(res)][objectKey(namespace, name)]
	if !ok {
		return nil, scaleNotFound(res, name)
	}
	obj, err := view(res, obj)
	if err != nil {
		return nil, err
	}
	return scaleOf(res, obj)
}

// updateScale writes a deployment's replicas through its Scale. change
// turns the current Scale into the one to write (the PUT's body, the
// patched Scale, or the applied one: applied, whose managedFields the
// apply already made).
//
// Admission sees the Scales, as kube-apiserver's update handler and the
// kind's ScaleREST show them to it: mutating admission the Scale
// written, before ValidateScale (scaleUpdatedObjectInfo); validating
// admission the Scale of the object about to be stored
// (toScaleUpdateValidation), here before the object's own update.
func (s *store) updateScale(ctx context.Context, res *Resource, namespace, name, manager string, dry bool, change func(*autoscalingv1.Scale) (runtime.Object, error), applied bool) (runtime.Object, error) {
	defer s.lock(dry)()
	s.admitting(ctx) // admission: a client's write
	adm := s.takeAdmission()
	if err := s.stillServed(res); err != nil {
		return nil, err
	}
	obj, ok := s.objects[storageOf(res)][objectKey(namespace, name)]
	if !ok {
		return nil, scaleNotFound(res, name)
	}
	obj, err := view(res, obj)
	if err != nil {
		return nil, err
	}
	d := obj.DeepCopyObject()
	dm := metaOf(d)
	handler := managedfields.NewScaleHandler(dm.GetManagedFields(), res.GVR.GroupVersion(), replicasPaths(res))
	old, err := scaleOf(res, d)
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
	if sc.UID != "" && sc.UID != dm.GetUID() {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: res.GVR.Group, Resource: res.GVR.Resource + "/scale"}, name,
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", sc.UID, dm.GetUID()))
	}
	if !applied {
		sc = s.manageFields(scaleResource, "scale", old, sc, manager).(*autoscalingv1.Scale)
	}
	// Admission: mutating, of the Scale.
	if err := s.admitSubresource(adm, false, "UPDATE", res, "scale", namespace, name, sc, old.DeepCopy(), s.sameStored(res, namespace, name)); err != nil {
		return nil, err
	}

	if u, ok := d.(*unstructured.Unstructured); ok {
		// apiextensions-apiserver's scaleUpdatedObjectInfo: the
		// replicas go to specReplicasPath.
		if err := unstructured.SetNestedField(u.Object, int64(sc.Spec.Replicas), jsonPath(res.Hooks.ScaleReplicas.Spec)...); err != nil {
			return nil, err
		}
	} else {
		*scaledOf(d).replicas = &sc.Spec.Replicas
	}
	dm.SetResourceVersion(sc.ResourceVersion)
	entries, err := handler.ToParent(sc.ManagedFields)
	if err != nil {
		return nil, err
	}
	// kube-apiserver records a scale write with no time: ScaleHandler's
	// ToParent takes each entry's time from the object's own entries,
	// and the Scale's manager has none there (transcripts 88, 89b for a
	// custom resource; a Deployment's alike on kube-apiserver v1.37.2,
	// hack/realk8s), so that entry sorts first among its operation's.
	for i := range entries {
		if entries[i].Subresource == "scale" {
			entries[i].Time = nil
		}
	}
	sortManagedFields(entries)
	dm.SetManagedFields(entries)
	// Admission: validating, of the Scale of the object to be stored.
	if adm != nil {
		next, err := scaleOf(res, d)
		if err != nil {
			return nil, err
		}
		if err := s.admitSubresource(adm, true, "UPDATE", res, "scale", namespace, name, next, old.DeepCopy(), s.sameStored(res, namespace, name)); err != nil {
			return nil, err
		}
	}
	updated, err := s.updateLocked(res, namespace, name, "", manager, d, true)
	if err != nil {
		return nil, err
	}
	return scaleOf(res, updated)
}

// scaleOfCustom is apiextensions-apiserver's scaleFromCustomResource
// (pkg/registry/customresource/etcd.go): the Scale of a custom resource
// from its CRD's scale paths; a missing field reads as 0.
func scaleOfCustom(res *Resource, u *unstructured.Unstructured) (*autoscalingv1.Scale, error) {
	paths := res.Hooks.ScaleReplicas
	spec, _, err := unstructured.NestedInt64(u.Object, jsonPath(paths.Spec)...)
	if err != nil {
		return nil, err
	}
	status, _, err := unstructured.NestedInt64(u.Object, jsonPath(paths.Status)...)
	if err != nil {
		return nil, err
	}
	var selector string
	if paths.LabelSelector != "" {
		if selector, _, err = unstructured.NestedString(u.Object, jsonPath(paths.LabelSelector)...); err != nil {
			return nil, err
		}
	}
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(spec)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(status), Selector: selector},
	}, nil
}
