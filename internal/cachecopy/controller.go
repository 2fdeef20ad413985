// Package cachecopy is a copy of what an informer does at either end of
// its queue, which client-go v0.37.2 does not export: the RealFIFO
// options newQueueFIFO picks, and processDeltas, which turns each popped
// delta into a store write and handler calls. Both are in
// tools/cache/controller.go.
//
// 02-deltafifo teaches them (its step 4, and its README quotes them from
// here); later chapters reuse them to take an informer apart in memory.
// The copy leaves out only the logger, the metrics and the transform.
// TestProcessDeltasMatchesInformer, here and in 02-deltafifo, pins it
// against a real informer.
package cachecopy

import (
	"fmt"

	"k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
)

// !+queueOptions
// QueueOptions are the RealFIFOOptions newQueueFIFO (controller.go
// L1063-L1094) builds for an informer of objectType, read from the same
// feature gates. An informer's key function is MetaNamespaceKeyFunc;
// keyFunc lets a queue hold what has no metadata.
func QueueOptions(objectType any, keyFunc cache.KeyFunc, clientState cache.Store) cache.RealFIFOOptions {
	gates := features.FeatureGates()
	options := cache.RealFIFOOptions{
		Name:        fmt.Sprintf("RealFIFO %T", objectType),
		KeyFunction: keyFunc,
	}
	if gates.Enabled(features.AtomicFIFO) {
		// Atomic events forbid KnownObjects: the FIFO may release its
		// lock while the consumer works, so it must not read the
		// consumer's store.
		options.AtomicEvents = true
		options.UnlockWhileProcessing = gates.Enabled(features.UnlockWhileProcessingFIFO)
		options.EmitDeltaTypeBookmark = true
	} else {
		options.KnownObjects = clientState
	}
	return options
}

// !-queueOptions

// !+processDeltas
// ProcessDeltas is processDeltas (controller.go L823-L881): it applies
// each popped delta to the informer's store (clientState), then calls
// the handler. keyFunc is the store's; a relist uses it to find the
// keys that vanished.
func ProcessDeltas(handler cache.ResourceEventHandler, clientState cache.Store,
	deltas cache.Deltas, isInInitialList bool, keyFunc cache.KeyFunc) error {
	for _, d := range deltas { // from oldest to newest
		obj := d.Object
		switch d.Type {
		case cache.ReplacedAll:
			info, ok := obj.(cache.ReplacedAllInfo)
			if !ok {
				return fmt.Errorf("ReplacedAll did not contain ReplacedAllInfo: %T", obj)
			}
			if err := processReplacedAllInfo(handler, info, clientState, isInInitialList, keyFunc); err != nil {
				return err
			}
		case cache.SyncAll:
			if _, ok := obj.(cache.SyncAllInfo); !ok {
				return fmt.Errorf("SyncAll did not contain SyncAllInfo: %T", obj)
			}
			for _, obj := range clientState.List() { // map order
				handler.OnUpdate(obj, obj)
			}
			return nil
		case cache.Sync, cache.Replaced, cache.Added, cache.Updated:
			// Add or update is the store's answer, not the delta's type.
			if old, exists, err := clientState.Get(obj); err == nil && exists {
				if err := clientState.Update(obj); err != nil {
					return err
				}
				handler.OnUpdate(old, obj)
			} else {
				if err := clientState.Add(obj); err != nil {
					return err
				}
				handler.OnAdd(obj, isInInitialList)
			}
		case cache.Deleted:
			if err := clientState.Delete(obj); err != nil {
				return err
			}
			handler.OnDelete(obj)
		case cache.Bookmark:
			info, ok := obj.(cache.BookmarkInfo)
			if !ok {
				return fmt.Errorf("bookmark delta did not contain BookmarkInfo: %T", obj)
			}
			clientState.Bookmark(info.ResourceVersion)
		}
	}
	return nil
}

// !-processDeltas

// !+processReplacedAllInfo
// processReplacedAllInfo (controller.go L972-L1016) handles a relist.
// Every key in the store that the new list lacks was deleted while no
// watch told: it becomes a DeletedFinalStateUnknown holding the last
// state cached (reconcileReplacement, the_real_fifo.go L700-L724, with
// the store as its known objects and nothing queued). The store is
// replaced first, then the handler gets every tombstone, then OnUpdate
// or OnAdd for each listed object, in the list's order.
func processReplacedAllInfo(handler cache.ResourceEventHandler, info cache.ReplacedAllInfo,
	clientState cache.Store, isInInitialList bool, keyFunc cache.KeyFunc) error {
	newKeys := map[string]bool{}
	for _, obj := range info.Objects {
		key, err := keyFunc(obj)
		if err != nil {
			return cache.KeyError{Obj: obj, Err: err}
		}
		newKeys[key] = true
	}
	var deletions []cache.DeletedFinalStateUnknown
	for _, key := range clientState.ListKeys() { // map order
		if newKeys[key] {
			continue
		}
		deletedObj, exists, err := clientState.GetByKey(key)
		if err != nil || !exists {
			deletedObj = nil // client-go logs this, and goes on
		}
		deletions = append(deletions, cache.DeletedFinalStateUnknown{Key: key, Obj: deletedObj})
	}
	type replacement struct{ oldObj, newObj any }
	replacements := make([]replacement, 0, len(info.Objects))
	for _, obj := range info.Objects {
		if old, exists, err := clientState.Get(obj); err == nil && exists {
			replacements = append(replacements, replacement{oldObj: old, newObj: obj})
		} else {
			replacements = append(replacements, replacement{newObj: obj})
		}
	}

	if err := clientState.Replace(info.Objects, info.ResourceVersion); err != nil {
		return err
	}
	for _, objToDelete := range deletions {
		handler.OnDelete(objToDelete)
	}
	for _, r := range replacements {
		if r.oldObj != nil {
			handler.OnUpdate(r.oldObj, r.newObj)
		} else {
			handler.OnAdd(r.newObj, isInInitialList)
		}
	}
	return nil
}

// !-processReplacedAllInfo
