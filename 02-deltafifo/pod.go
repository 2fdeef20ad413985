package main

import (
	"fmt"

	"k8s.io/client-go/tools/cache"
)

// Pod stands in for a Kubernetes object. A queue does not care what
// it holds: it only needs a key, which podKey supplies.
type Pod struct {
	Name    string
	Version int
}

func pod(name string, version int) Pod {
	return Pod{Name: name, Version: version}
}

func (p Pod) String() string { return fmt.Sprintf("%s v%d", p.Name, p.Version) }

// podKey is the KeyFunction. Like DeletionHandlingMetaNamespaceKeyFunc
// it also accepts a tombstone, so a Store keyed by it can delete one.
func podKey(obj any) (string, error) {
	switch o := obj.(type) {
	case Pod:
		return o.Name, nil
	case cache.DeletedFinalStateUnknown:
		return o.Key, nil
	}
	return "", fmt.Errorf("podKey: %T is not a Pod", obj)
}
