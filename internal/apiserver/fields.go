package apiserver

import (
	"net/http"
	"sort"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// metadata.managedFields is filled by apimachinery's own FieldManager with
// the built-in types' real schemas (the ones client-go's apply
// configurations use), so entries read as kube-apiserver's do: one per
// manager, operation and subresource, keyed list items such as
// k:{"name":"c"} (transcript 01).

type fieldManagerKey struct {
	res         *Resource
	subresource string // "" or "status"
}

// typeConverter knows the schemas of every built-in kind (client-go's
// apply configurations), as kube-apiserver's is built from its OpenAPI
// models. Built once per process, on first use: it is read-only.
var typeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(Scheme)
})

// fieldManager returns the FieldManager of res's writes through
// subresource ("" or "status"; "scale" for the Scale kind), made on first
// use: a server pays only for the kinds it is written. Callers hold s.mu.
func (s *store) fieldManager(res *Resource, subresource string) *managedfields.FieldManager {
	key := fieldManagerKey{res, subresource}
	if fm, ok := s.fields[key]; ok {
		return fm
	}
	gvk := res.GroupVersionKind()
	var fm *managedfields.FieldManager
	var err error
	if res.Hooks != nil && res.Hooks.NewFieldManager != nil {
		fm, err = res.Hooks.NewFieldManager(subresource)
	} else if res == tokenRequestResource {
		converter, cerr := tokenTypeConverter()
		if cerr != nil {
			panic("apiserver: the embedded OpenAPI documents: " + cerr.Error())
		}
		fm, err = managedfields.NewDefaultFieldManager(converter, Scheme, Scheme, Scheme, gvk, gvk.GroupVersion(), subresource, nil)
	} else if res == scaleResource {
		// The Scale kind is not among client-go's apply
		// configurations: its schema comes from the OpenAPI
		// documents (openapi.go).
		converter, cerr := scaleTypeConverter()
		if cerr != nil {
			panic("apiserver: the embedded OpenAPI documents: " + cerr.Error())
		}
		fm, err = managedfields.NewDefaultFieldManager(converter, Scheme, Scheme, Scheme, gvk, gvk.GroupVersion(), subresource, nil)
	} else {
		// The defaulter runs only in Apply (apply.go).
		var reset map[fieldpath.APIVersion]fieldpath.Filter
		if res.ResetFields != nil {
			reset = map[fieldpath.APIVersion]fieldpath.Filter{
				fieldpath.APIVersion(gvk.GroupVersion().String()): fieldpath.NewExcludeSetFilter(fieldpath.NewSet(res.ResetFields(subresource)...)),
			}
		}
		fm, err = managedfields.NewDefaultFieldManager(typeConverter(), Scheme, resourceDefaulter{res}, Scheme, gvk, gvk.GroupVersion(), subresource, reset)
	}
	if err != nil {
		panic("apiserver: field manager for " + res.String() + ": " + err.Error()) // the resource table is wrong
	}
	s.fields[key] = fm
	return fm
}

// manageFields records manager's ownership of the fields that next sets
// or changes relative to live, as kube-apiserver does on every write. The
// entries' times come from the server's clock, so output stays
// deterministic. Callers hold s.mu.
func (s *store) manageFields(res *Resource, subresource string, live, next runtime.Object, manager string) runtime.Object {
	fm := s.fieldManager(res, subresource)
	gvk := res.GroupVersionKind()
	live, next = live.DeepCopyObject(), next.DeepCopyObject()
	live.GetObjectKind().SetGroupVersionKind(gvk)
	next.GetObjectKind().SetGroupVersionKind(gvk)
	out := fm.UpdateNoErrors(live, next, manager)
	clearTypeMeta(out)
	m := metaOf(out)
	entries := m.GetManagedFields()
	now := s.now()
	for i := range entries {
		if entries[i].Manager == manager && entries[i].Subresource == subresource {
			entries[i].Time = &now
		}
	}
	sortManagedFields(entries)
	m.SetManagedFields(entries)
	return out
}

// sortManagedFields orders entries as apimachinery's field manager does
// (managedfields/internal sortEncodedManagedFields): by operation, time,
// manager, apiVersion, subresource. The entries' times were just
// restamped from the server's clock, so the order is made again.
func sortManagedFields(entries []metav1.ManagedFieldsEntry) {
	sort.SliceStable(entries, func(i, j int) bool {
		p, q := entries[i], entries[j]
		if p.Operation != q.Operation {
			return p.Operation < q.Operation
		}
		var ps, qs int64
		if p.Time != nil {
			ps = p.Time.Unix()
		}
		if q.Time != nil {
			qs = q.Time.Unix()
		}
		if ps != qs {
			return ps < qs
		}
		if p.Manager != q.Manager {
			return p.Manager < q.Manager
		}
		if p.APIVersion != q.APIVersion {
			return p.APIVersion < q.APIVersion
		}
		return p.Subresource < q.Subresource
	})
}

// fieldManager names the writer as kube-apiserver does without an explicit
// ?fieldManager=: the User-Agent up to its first "/" ("curl" in the
// transcripts; for client-go, the program's name).
func fieldManager(r *http.Request) string {
	if m := r.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	ua := r.Header.Get("User-Agent")
	if i := strings.Index(ua, "/"); i >= 0 {
		ua = ua[:i]
	}
	if ua == "" {
		return "unknown"
	}
	return ua
}
