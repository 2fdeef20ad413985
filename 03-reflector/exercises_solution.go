//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./03-reflector -run Exercise -v

package main

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Exercise 4. What Reflector.list and Reflector.watch do, without the
// pager, the backoff, the resync and the relist on 410.
func listAndWatch(ctx context.Context, lw cache.ListerWatcherWithContext,
	store cache.Store) (lastRV string, err error) {
	// LIST. The list's own resourceVersion, not any item's, is where
	// the watch must start: it is the state the whole list was read at.
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return "", err
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		return "", err
	}
	items := make([]any, len(objs))
	for i, o := range objs {
		items[i] = o
	}
	lastRV = lm.GetResourceVersion()
	if err := store.Replace(items, lastRV); err != nil {
		return lastRV, err
	}

	// WATCH from there: nothing between the list and the watch is lost.
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{
		ResourceVersion:     lastRV,
		AllowWatchBookmarks: true,
	})
	if err != nil {
		return lastRV, err
	}
	defer w.Stop()
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return lastRV, nil
		case ev, ok = <-w.ResultChan():
			if !ok {
				return lastRV, nil // the server ended the watch
			}
		}
		if ev.Type == watch.Error {
			return lastRV, apierrors.FromObject(ev.Object)
		}
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			return lastRV, err
		}
		switch ev.Type {
		case watch.Added:
			err = store.Add(ev.Object)
		case watch.Modified:
			err = store.Update(ev.Object)
		case watch.Deleted:
			err = store.Delete(ev.Object)
		case watch.Bookmark:
		default:
			err = fmt.Errorf("unexpected watch event %s", ev.Type)
		}
		if err != nil {
			return lastRV, err
		}
		lastRV = m.GetResourceVersion()
	}
}
