package admission

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// objects are admission.ObjectInterfaces for the workshop cluster's
// objects: kube-apiserver's plugins create, type, convert and default
// objects through them. The store's objects are already of the version a
// request names (typed from client-go's scheme, or unstructured for a
// custom resource), so a conversion is a copy, but for a custom resource
// sent to a webhook of another of its versions.
type objects struct{ server *apiserver.Server }

var _ admission.ObjectInterfaces = objects{}

func (o objects) GetObjectCreater() runtime.ObjectCreater                       { return o }
func (o objects) GetObjectTyper() runtime.ObjectTyper                           { return o }
func (o objects) GetObjectDefaulter() runtime.ObjectDefaulter                   { return o }
func (o objects) GetObjectConvertor() runtime.ObjectConvertor                   { return o }
func (o objects) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper { return o }

// New makes an object of gvk: a typed one for a built-in kind, else
// (a custom resource) an unstructured one.
func (objects) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if apiserver.Scheme.Recognizes(gvk) {
		return apiserver.Scheme.New(gvk)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

func (objects) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		gvk := u.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" {
			return nil, false, runtime.NewMissingKindErr("object has no kind")
		}
		return []schema.GroupVersionKind{gvk}, false, nil
	}
	return apiserver.Scheme.ObjectKinds(obj)
}

func (objects) Recognizes(schema.GroupVersionKind) bool { return true }

// Default does nothing. The store defaults an object before admission,
// as kube-apiserver's decoder does (createLocked); kube-apiserver's
// webhook plugin also defaults the object a webhook patched, which the
// workshop cluster does not.
func (objects) Default(runtime.Object) {}

// Convert copies in to out: the plugins convert a patched object back
// into the request's version, and an object into the version a webhook
// asks for (matchPolicy Equivalent). A built-in kind's objects are of
// the request's version already. A custom resource of another version
// is converted by its CRD's converter ([apiserver.Server.ConvertCustom]:
// its conversion webhook, if it has one), as kube-apiserver converts it
// for a webhook of another version. Between a typed and an unstructured
// object it converts through JSON fields.
func (o objects) Convert(in, out, _ any) error {
	if reflect.TypeOf(in) == reflect.TypeOf(out) {
		if u, ok := in.(*unstructured.Unstructured); ok {
			dst := out.(*unstructured.Unstructured)
			if want := dst.GroupVersionKind(); !want.Empty() && want.GroupVersion() != u.GroupVersionKind().GroupVersion() {
				converted, err := o.server.ConvertCustom(u, want.GroupVersion())
				if err != nil {
					return err
				}
				u = converted.(*unstructured.Unstructured)
			}
			dst.Object = runtime.DeepCopyJSON(u.Object)
			return nil
		}
		reflect.ValueOf(out).Elem().Set(reflect.ValueOf(in.(runtime.Object).DeepCopyObject()).Elem())
		return nil
	}
	switch i := in.(type) {
	case *unstructured.Unstructured:
		return runtime.DefaultUnstructuredConverter.FromUnstructured(i.Object, out)
	case runtime.Object:
		if u, ok := out.(*unstructured.Unstructured); ok {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(i)
			u.Object = m
			return err
		}
	}
	return fmt.Errorf("workshop cluster: cannot convert %T to %T", in, out)
}

func (o objects) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	if _, ok := in.(runtime.Unstructured); ok {
		return in, nil
	}
	return apiserver.Scheme.ConvertToVersion(in, gv)
}

func (objects) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return "", "", fmt.Errorf("workshop cluster: no field label conversion for %v", gvk)
}

// EquivalentResourcesFor lists the served versions of resource's group
// and resource: a webhook with matchPolicy Equivalent that names another
// version is called with the request's object in that version.
func (o objects) EquivalentResourcesFor(resource schema.GroupVersionResource, subresource string) []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	for _, r := range o.server.Resources() {
		if r.GVR.GroupResource() == resource.GroupResource() {
			out = append(out, r.GVR)
		}
	}
	return out
}

// KindFor is the kind of resource's objects (of its status subresource
// too), or the kind its subresource takes (apiserver.SubresourceKind: a
// Scale, a Binding, an Eviction); "" for what is not served.
func (o objects) KindFor(resource schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	if gvk, ok := apiserver.SubresourceKind(resource, subresource); ok {
		return gvk
	}
	for _, r := range o.server.Resources() {
		if r.GVR == resource {
			return r.GroupVersionKind()
		}
	}
	return schema.GroupVersionKind{}
}
