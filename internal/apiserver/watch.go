package apiserver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/watch"
)

// maxPending is how many events a watcher may have waiting to be written
// before the server gives up on it and closes the stream, as
// kube-apiserver does with a watcher that does not keep up.
const maxPending = 10000

// watchEvent is one frame of a watch stream.
type watchEvent struct {
	Type   watch.EventType
	Object runtime.Object
}

// watcher is one open watch: what it selects, and a queue of frames that
// the HTTP handler drains. Writers never block on it.
type watcher struct {
	res       *Resource
	namespace string
	label     labels.Selector
	field     fields.Selector
	shard     apisharding.Selector
	bookmarks bool   // allowWatchBookmarks
	startRV   uint64 // only changes after this resourceVersion are sent

	mu      sync.Mutex
	pending []watchEvent
	ready   chan struct{} // signalled when pending grows
	done    chan struct{} // closed when the server ends this watch
	once    sync.Once
}

func (w *watcher) stop() { w.once.Do(func() { close(w.done) }) }

// send queues what ev means for this watcher; false if the watcher has
// fallen too far behind, or cannot read the change (its conversion
// failed: then an ERROR event ends what it queued).
func (w *watcher) send(ev event) bool {
	if storageOf(ev.Res) != storageOf(w.res) || ev.RV <= w.startRV {
		return true
	}
	we, ok, err := w.translate(ev)
	if err != nil {
		w.push(errorEvent(err))
		return false
	}
	if !ok {
		return true
	}
	return w.push(we)
}

// errorEvent is the ERROR event that ends a watch which cannot read an
// object: its conversion failed. kube-apiserver's etcd watcher sends it
// when it cannot decode an event, and ends the watch (k8s.io/apiserver
// pkg/storage/etcd3/watcher.go, transformErrorToEvent: the error's
// Status, or for the codec's own error a 500 InternalError wrapping it,
// "Internal error occurred: ..."). Behind kube-apiserver's watch cache
// (on by default) a client's watch is not sent it: the cache's own etcd
// watch meets it, and the cacher ends its watches when it starts again
// (k8s.io/apiserver pkg/storage/cacher/cacher.go, startCaching).
func errorEvent(err error) watchEvent {
	var status apierrors.APIStatus
	var stored storageError
	switch {
	case errors.As(err, &stored):
		status = apierrors.NewInternalError(stored.err)
	case !errors.As(err, &status):
		status = apierrors.NewInternalError(err)
	}
	st := status.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	return watchEvent{watch.Error, &st}
}

func (w *watcher) push(we watchEvent) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) >= maxPending {
		return false
	}
	w.pending = append(w.pending, we)
	select {
	case w.ready <- struct{}{}:
	default:
	}
	return true
}

// take returns the frames queued so far.
func (w *watcher) take() []watchEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.pending
	w.pending = nil
	return p
}

func (w *watcher) selects(obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	if w.namespace != "" && metaOf(obj).GetNamespace() != w.namespace {
		return false
	}
	return inShard(w.shard, obj) && matches(w.res, obj, w.label, w.field)
}

// translate turns a change into what this watcher sees. With a selector, an
// object that starts matching arrives as ADDED, and one that stops
// matching as DELETED carrying its old state with the new
// resourceVersion (transcript 13).
func (w *watcher) translate(ev event) (watchEvent, bool, error) {
	var err error
	if ev.Object, err = view(w.res, ev.Object); err != nil {
		return watchEvent{}, false, err
	}
	if ev.Type == watch.Modified { // the previous state decides only a MODIFIED
		if ev.Prev, err = view(w.res, ev.Prev); err != nil {
			return watchEvent{}, false, err
		}
	}
	now, before := w.selects(ev.Object), w.selects(ev.Prev)
	switch ev.Type {
	case watch.Added:
		return watchEvent{watch.Added, ev.Object}, now, nil
	case watch.Deleted:
		return watchEvent{watch.Deleted, ev.Object}, now, nil
	}
	switch {
	case now && before:
		return watchEvent{watch.Modified, ev.Object}, true, nil
	case now:
		return watchEvent{watch.Added, ev.Object}, true, nil
	case before:
		old := ev.Prev.DeepCopyObject()
		setRV(old, ev.RV)
		return watchEvent{watch.Deleted, old}, true, nil
	}
	return watchEvent{}, false, nil
}

// watchOptions are the parsed, validated parameters of a watch.
type watchOptions struct {
	listOptions
	SendInitialEvents *bool
	AllowBookmarks    bool
}

// InitialEventsAnnotation marks the bookmark that ends a watch-list's
// initial events (metav1.InitialEventsAnnotationKey).
const InitialEventsAnnotation = metav1.InitialEventsAnnotationKey

// watch opens a watch. The initial frames (synthetic ADDED, a replay of
// history, the initial-events-end bookmark) are queued and the watcher is
// registered under one lock, so no change falls between them.
func (s *store) watch(res *Resource, o watchOptions) (*watcher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServed(res); err != nil {
		return nil, err
	}
	w := &watcher{
		res: res, namespace: o.Namespace, label: o.Label, field: o.Field, shard: o.Shard,
		bookmarks: o.AllowBookmarks, startRV: s.rv,
		ready: make(chan struct{}, 1), done: make(chan struct{}),
	}
	var initial []watchEvent
	var failed error // an object the watch cannot read (its conversion)
	synthetic := func() {
		objs := s.objects[storageOf(res)]
		for _, key := range sortedKeys(objs) {
			obj, err := view(res, objs[key])
			if err != nil {
				failed = err
				return
			}
			if w.selects(obj) {
				initial = append(initial, watchEvent{watch.Added, obj})
			}
		}
	}
	switch {
	case o.SendInitialEvents != nil && *o.SendInitialEvents:
		// Watch-list: the current state as ADDED events, then a
		// bookmark at the current resourceVersion marking the end of
		// the initial events (transcripts 18, 20, 38).
		if rv, err := parseRV(o.RV); err != nil {
			return nil, err
		} else if rv > s.rv {
			return nil, tooLargeResourceVersion(rv, s.rv)
		}
		synthetic()
		if o.AllowBookmarks && failed == nil {
			bm := res.New()
			setRV(bm, s.rv)
			metaOf(bm).SetAnnotations(map[string]string{InitialEventsAnnotation: "true"})
			initial = append(initial, watchEvent{watch.Bookmark, bm})
		}
	case o.SendInitialEvents != nil:
		// sendInitialEvents=false: changes only, from the given
		// resourceVersion or from now.
		rv, err := parseRV(o.RV)
		if err != nil {
			return nil, err
		}
		if rv != 0 {
			if initial, failed, err = s.replay(w, rv); err != nil {
				return nil, err
			}
		}
	case o.RV == "" || o.RV == "0":
		// "Get state and start at most recent" / "start at any": a
		// synthetic ADDED for every current object (transcripts 16, 17).
		synthetic()
	default:
		rv, err := parseRV(o.RV)
		if err != nil {
			return nil, err
		}
		if initial, failed, err = s.replay(w, rv); err != nil {
			return nil, err
		}
	}
	if failed != nil {
		// The initial events end with the ERROR event, and so does the
		// watch, as kube-apiserver's etcd watcher ends it when it cannot
		// decode its initial state.
		w.pending = append(initial, errorEvent(failed))
		w.ready <- struct{}{}
		w.stop()
		return w, nil
	}
	w.pending = initial
	if len(initial) > 0 {
		w.ready <- struct{}{}
	}
	s.watchers[w] = struct{}{}
	return w, nil
}

// replay returns the history after rv as this watcher sees it, up to
// the first change it cannot read (failed: its conversion). An rv the
// history no longer reaches is 410 Expired, with kube-apiserver's message;
// an rv in the future simply waits for changes (transcript 22).
func (s *store) replay(w *watcher, rv uint64) (out []watchEvent, failed, err error) {
	if rv < s.compacted {
		return nil, nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, s.compacted))
	}
	if rv > s.rv {
		w.startRV = rv
		return nil, nil, nil
	}
	for _, ev := range s.history {
		if ev.RV <= rv || storageOf(ev.Res) != storageOf(w.res) {
			continue
		}
		we, ok, err := w.translate(ev)
		if err != nil {
			return out, err, nil
		}
		if ok {
			out = append(out, we)
		}
	}
	return out, nil, nil
}

func (s *store) unwatch(w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watchers, w)
	w.stop()
}

// dropWatches ends every open watch stream; clients see the stream close.
func (s *store) dropWatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.watchers)
	for w := range s.watchers {
		delete(s.watchers, w)
		w.stop()
	}
	return n
}

// bookmark sends a BOOKMARK at the current resourceVersion to every watch
// that allowed bookmarks. kube-apiserver sends these on a timer; here they
// are sent only when asked, so output stays deterministic.
func (s *store) bookmark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for w := range s.watchers {
		if !w.bookmarks {
			continue
		}
		bm := w.res.New()
		setRV(bm, s.rv)
		if w.push(watchEvent{watch.Bookmark, bm}) {
			n++
		}
	}
	return n
}

func (s *store) openWatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}

func parseRV(rv string) (uint64, error) {
	if rv == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %s", rv))
	}
	return v, nil
}

// continueToken is kube-apiserver's continue token: base64 of
// {"v":"meta.k8s.io/v1","rv":N,"start":"<key after which to go on>"}
// (transcript 04).
type continueToken struct {
	APIVersion string `json:"v"`
	RV         uint64 `json:"rv"`
	Start      string `json:"start"`
}

func encodeContinue(rv uint64, start string) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", RV: rv, Start: start})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (continueToken, error) {
	var tok continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		if b, err = base64.StdEncoding.DecodeString(s); err != nil {
			return tok, fmt.Errorf("continue key is not valid: %v", err)
		}
	}
	if err := json.Unmarshal(b, &tok); err != nil || tok.APIVersion != "meta.k8s.io/v1" || tok.Start == "" {
		return tok, fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	return tok, nil
}
