package reliability

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// handler is an informer's event handler that keeps its own view of the
// world from the events alone, and records every event that cannot
// happen to an informer that loses nothing: an add of an object it
// already has, an update or a delete of one it does not have, an update
// whose old object is not the one it was last told of, a resourceVersion
// going back. It is also slow now and then, like real handlers.
type handler struct {
	mu      sync.Mutex
	model   map[string]string // key → resourceVersion, from the events
	seen    map[string]bool   // every key ever added
	deleted map[string]bool   // every key OnDelete reported
	errs    []string          // impossible sequences
	st      stats
	changed chan struct{} // signalled after every event
}

func newHandler() *handler {
	return &handler{
		model: map[string]string{}, seen: map[string]bool{}, deleted: map[string]bool{},
		changed: make(chan struct{}, 1),
	}
}

// view copies the handler's model.
func (h *handler) view() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := make(map[string]string, len(h.model))
	for k, rv := range h.model {
		v[k] = rv
	}
	return v
}

func (h *handler) OnAdd(obj any, _ bool) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !h.event(ok, "OnAdd of a %T", obj) {
		return
	}
	key := cm.Namespace + "/" + cm.Name
	h.mu.Lock()
	h.st.onAdd++
	if rv, ok := h.model[key]; ok {
		h.fail("OnAdd of %s at rv %s, which the handler has at rv %s", key, cm.ResourceVersion, rv)
	}
	if h.deleted[key] {
		h.fail("OnAdd of %s after its OnDelete (names are never reused)", key)
	}
	h.model[key], h.seen[key] = cm.ResourceVersion, true
	h.mu.Unlock()
	h.done(cm.ResourceVersion)
}

func (h *handler) OnUpdate(oldObj, newObj any) {
	old, ok1 := oldObj.(*corev1.ConfigMap)
	cm, ok2 := newObj.(*corev1.ConfigMap)
	if !h.event(ok1 && ok2, "OnUpdate of a %T", newObj) {
		return
	}
	key := cm.Namespace + "/" + cm.Name
	h.mu.Lock()
	h.st.onUpdate++
	switch rv, ok := h.model[key]; {
	case !ok:
		h.fail("OnUpdate of %s, which the handler does not have", key)
	case rv != old.ResourceVersion:
		h.fail("OnUpdate of %s from rv %s, but the handler last saw rv %s", key, old.ResourceVersion, rv)
	case less(cm.ResourceVersion, old.ResourceVersion):
		h.fail("OnUpdate of %s goes back from rv %s to %s", key, old.ResourceVersion, cm.ResourceVersion)
	}
	h.model[key] = cm.ResourceVersion
	h.mu.Unlock()
	h.done(cm.ResourceVersion)
}

func (h *handler) OnDelete(obj any) {
	// The informer learned of the delete only from a relist: it hands
	// over the last state it had, wrapped.
	tomb, tombstone := obj.(cache.DeletedFinalStateUnknown)
	if tombstone {
		obj = tomb.Obj
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !h.event(ok, "OnDelete of a %T", obj) {
		return
	}
	key := cm.Namespace + "/" + cm.Name
	h.mu.Lock()
	h.st.onDelete++
	if tombstone {
		h.st.tombstones++
		if tomb.Key != key {
			h.fail("tombstone key %s for %s", tomb.Key, key)
		}
	}
	switch rv, ok := h.model[key]; {
	case !ok:
		h.fail("OnDelete of %s, which the handler does not have", key)
	case less(cm.ResourceVersion, rv):
		h.fail("OnDelete of %s at rv %s, older than the rv %s the handler has", key, cm.ResourceVersion, rv)
	}
	delete(h.model, key)
	h.deleted[key] = true
	h.mu.Unlock()
	h.done(cm.ResourceVersion)
}

// event records an object of the wrong type as a failure.
func (h *handler) event(ok bool, format string, obj any) bool {
	if !ok {
		h.mu.Lock()
		h.fail(format, obj)
		h.mu.Unlock()
	}
	return ok
}

// fail records an impossible sequence. Callers hold h.mu.
func (h *handler) fail(format string, args ...any) {
	h.errs = append(h.errs, fmt.Sprintf(format, args...))
}

// done signals a change, and is slow for one event in five: a handler
// that does real work holds up the informer's delivery to it, never the
// informer itself.
func (h *handler) done(rv string) {
	if n, _ := strconv.Atoi(rv); n%5 == 0 {
		h.mu.Lock()
		h.st.slow++
		h.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// less compares resourceVersions. Clients must treat them as opaque; the
// workshop cluster's are sequential integers, which lets this test check
// their order.
func less(a, b string) bool {
	x, _ := strconv.ParseUint(a, 10, 64)
	y, _ := strconv.ParseUint(b, 10, 64)
	return x < y
}
