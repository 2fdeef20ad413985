package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// !+counter
// appCounter is the code under test in this chapter: an event handler
// that keeps the number of pods of each app (their "app" label), as a
// dashboard would. It is a cache.ResourceEventHandler: give it to a pod
// informer's AddEventHandler.
type appCounter struct {
	mu     sync.Mutex
	counts map[string]int
	// changed is closed, and replaced, at every change. It is what a
	// test waits on: code whose effect a test must await needs a signal
	// like it, or a write to the API that the test can watch.
	changed chan struct{}
}

func newAppCounter() *appCounter {
	return &appCounter{counts: map[string]int{}, changed: make(chan struct{})}
}

func (a *appCounter) OnAdd(obj any, _ bool)       { a.move("", appOf(obj)) }
func (a *appCounter) OnUpdate(oldObj, newObj any) { a.move(appOf(oldObj), appOf(newObj)) }
func (a *appCounter) OnDelete(obj any)            { a.move(appOf(obj), "") }

// appOf is a pod's app label, "" for none. OnDelete may be given a
// DeletedFinalStateUnknown tombstone in place of the pod.
func appOf(obj any) string {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if p, ok := obj.(*corev1.Pod); ok {
		return p.Labels["app"]
	}
	return ""
}

// !-counter

// move counts a pod out of app from and into app to ("" for none).
func (a *appCounter) move(from, to string) {
	if from == to {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if from != "" {
		if a.counts[from]--; a.counts[from] == 0 {
			delete(a.counts, from)
		}
	}
	if to != "" {
		a.counts[to]++
	}
	close(a.changed)
	a.changed = make(chan struct{})
}

// !+await
// await blocks until the counts read want ("api=1 web=2"), or ctx ends:
// a test waits for the handler's effect without sleeping or polling.
func (a *appCounter) await(ctx context.Context, want string) error {
	for {
		a.mu.Lock()
		got, changed := a.stringLocked(), a.changed
		a.mu.Unlock()
		if got == want {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("counts %q, waiting for %q: %w", got, want, context.Cause(ctx))
		}
	}
}

// !-await

// String is the counts as "api=1 web=2", apps in order.
func (a *appCounter) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stringLocked()
}

func (a *appCounter) stringLocked() string {
	var parts []string
	for _, app := range slices.Sorted(maps.Keys(a.counts)) {
		parts = append(parts, fmt.Sprintf("%s=%d", app, a.counts[app]))
	}
	return strings.Join(parts, " ")
}
