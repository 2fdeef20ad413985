package main

// The informer's end of the queue: what an informer does with each entry
// it pops. client-go's processDeltas is unexported, so the chapter copies
// it here, to show the handler calls that the entries of step 4 turn
// into. TestProcessDeltasMatchesInformer checks the copy against a real
// informer.

import (
	"fmt"

	"k8s.io/client-go/tools/cache"
)

// !+process
// process is the PopProcessFunc an informer hands its queue (see
// newInformer in controller.go): it applies each popped entry to the
// informer's store and calls the event handler, in processDeltas.
func process(store cache.Store, h cache.ResourceEventHandler) cache.PopProcessFunc {
	return func(obj any, isInInitialList bool) error {
		deltas, ok := obj.(cache.Deltas)
		if !ok {
			return fmt.Errorf("popped %T, not cache.Deltas", obj)
		}
		return processDeltas(h, store, deltas, isInInitialList)
	}
}

// !-process

// !+processDeltas
// processDeltas is controller.go's processDeltas (L823), copied with
// only the logger and the key function left out, so that you can see
// which handler calls each kind of entry turns into.
func processDeltas(h cache.ResourceEventHandler, store cache.Store, deltas cache.Deltas, isInInitialList bool) error {
	for _, d := range deltas { // oldest first
		switch d.Type {
		case cache.Added, cache.Updated, cache.Replaced, cache.Sync:
			if old, exists, err := store.Get(d.Object); err == nil && exists {
				if err := store.Update(d.Object); err != nil {
					return err
				}
				h.OnUpdate(old, d.Object)
			} else {
				if err := store.Add(d.Object); err != nil {
					return err
				}
				h.OnAdd(d.Object, isInInitialList)
			}
		case cache.Deleted:
			if err := store.Delete(d.Object); err != nil {
				return err
			}
			h.OnDelete(d.Object)
		case cache.ReplacedAll:
			info, ok := d.Object.(cache.ReplacedAllInfo)
			if !ok {
				return fmt.Errorf("ReplacedAll holds %T", d.Object)
			}
			if err := processReplacedAll(h, store, info, isInInitialList); err != nil {
				return err
			}
		case cache.SyncAll:
			for _, obj := range store.List() { // map order
				h.OnUpdate(obj, obj)
			}
		case cache.Bookmark:
			info, ok := d.Object.(cache.BookmarkInfo)
			if !ok {
				return fmt.Errorf("Bookmark holds %T", d.Object)
			}
			store.Bookmark(info.ResourceVersion)
		}
	}
	return nil
}

// !-processDeltas

// !+processReplacedAll
// processReplacedAll is processReplacedAllInfo (controller.go L972):
// keys in the store but not in the list become tombstones, the store
// is replaced, and only then are the handlers called: OnDelete for
// each tombstone, then OnUpdate or OnAdd for each listed object.
func processReplacedAll(h cache.ResourceEventHandler, store cache.Store, info cache.ReplacedAllInfo, isInInitialList bool) error {
	listed := map[string]bool{}
	for _, obj := range info.Objects {
		key, err := podKey(obj)
		if err != nil {
			return err
		}
		listed[key] = true
	}
	var gone []cache.DeletedFinalStateUnknown
	for _, key := range store.ListKeys() { // map order
		if !listed[key] {
			last, _, err := store.GetByKey(key)
			if err != nil {
				return err
			}
			gone = append(gone, cache.DeletedFinalStateUnknown{Key: key, Obj: last})
		}
	}
	olds := make([]any, len(info.Objects)) // nil: not in the store
	for i, obj := range info.Objects {
		if old, exists, err := store.Get(obj); err == nil && exists {
			olds[i] = old
		}
	}
	if err := store.Replace(info.Objects, info.ResourceVersion); err != nil {
		return err
	}
	for _, tombstone := range gone {
		h.OnDelete(tombstone)
	}
	for i, obj := range info.Objects {
		if olds[i] != nil {
			h.OnUpdate(olds[i], obj)
		} else {
			h.OnAdd(obj, isInInitialList)
		}
	}
	return nil
}

// !-processReplacedAll
