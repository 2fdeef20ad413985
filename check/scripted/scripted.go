// Package scripted is a ListerWatcher a test drives, for tests that
// compare what client-go's own informer does with what a chapter does by
// hand: List returns the list the test set last, each Watch a fresh fake
// watcher that the test takes with Next and feeds.
package scripted

import (
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// ListWatch opts out of watch-list, so a reflector LISTs, then WATCHes.
type ListWatch struct {
	mu      sync.Mutex
	list    runtime.Object
	watches chan *watch.RaceFreeFakeWatcher
}

var _ cache.ListerWatcher = &ListWatch{}

// New returns a ListWatch whose List answers list (a typed list with its
// resourceVersion set).
func New(list runtime.Object) *ListWatch {
	return &ListWatch{list: list, watches: make(chan *watch.RaceFreeFakeWatcher, 10)}
}

// SetList makes later Lists answer list: what a relist finds.
func (s *ListWatch) SetList(list runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = list
}

// List returns new objects on every call, as a server would.
func (s *ListWatch) List(metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list.DeepCopyObject(), nil
}

// Watch hands the test a fresh fake watcher (Next).
func (s *ListWatch) Watch(metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewRaceFreeFake()
	s.watches <- w
	return w, nil
}

// IsWatchListSemanticsUnSupported opts out of watch-list.
func (*ListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// Next returns the watcher of the next Watch call, or fails t after 10 s.
func (s *ListWatch) Next(t testing.TB) *watch.RaceFreeFakeWatcher {
	t.Helper()
	select {
	case w := <-s.watches:
		return w
	case <-time.After(10 * time.Second):
		t.Fatal("no Watch call in 10 s")
		return nil
	}
}
