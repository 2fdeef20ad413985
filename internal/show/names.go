package show

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// Names is the names of objs, sorted: a cache hands out objects in map
// order (ByIndex, List), so a chapter sorts what it prints. objs may be
// objects (a cache's []any), or a list's Items (values: their address is
// read); a tombstone is named by the object it holds; anything without
// metadata is left out.
func Names[T any](objs []T) []string {
	names := []string{}
	for i := range objs {
		var obj any = objs[i]
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			m, err = meta.Accessor(&objs[i]) // a list's item, held by value
		}
		if err == nil {
			names = append(names, m.GetName())
		}
	}
	slices.Sort(names)
	return names
}
