package main

// What only the workshop cluster can stage, on demand: the faults that
// make steps 3 and 4 show something. Nothing here is part of the
// controller pattern. On a real cluster each prints one line saying it
// was skipped (TestRealClusterShape checks that).

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// stageConflicts makes the next two updates of configmap/api-summary
// answer 409 Conflict, as when someone else wrote first, and says so.
// It reports whether it could: kube-apiserver cannot be made to.
func (s *steps) stageConflicts() bool {
	if !s.c.Embedded() {
		fmt.Fprintln(s.out, "  skipped on a real cluster: "+
			"kube-apiserver cannot be made to answer 409 Conflict on demand")
		return false
	}
	// !+conflict
	s.c.Server.InjectFault(apiserver.Fault{
		Verb: "update", Resource: "configmaps", Name: "api-summary",
		Times: 2,
		Err: apierrors.NewConflict(
			schema.GroupResource{Resource: "configmaps"}, "api-summary",
			fmt.Errorf("the object has been modified")),
	})
	// !-conflict
	fmt.Fprintln(s.out, "  inject: the next 2 updates of configmap/api-summary answer 409 Conflict")
	return true
}

// stageOutage makes the informer's re-watch get 410 Expired, so that
// it relists, and says so. It reports whether it could: kube-apiserver
// cannot be made to compact its watch cache on demand. informerRV is
// the resourceVersion the informer will ask to watch from.
func (s *steps) stageOutage(informerRV string) bool {
	if !s.c.Embedded() {
		fmt.Fprintln(s.out, "  relist skipped on a real cluster: "+
			"kube-apiserver cannot be made to compact its watch cache on demand")
		return false
	}
	// !+relist
	s.c.Server.HoldWatches()
	s.c.Server.DropWatches()
	rv := s.c.Server.CompactHistory()
	s.c.Server.ReleaseWatches()
	// !-relist
	s.printf("  outage: watch dropped; history compacted to rv=%s, past the informer's rv=%s\n",
		rv, informerRV)
	fmt.Fprintln(s.out, "  the re-watch gets 410 Expired; after its backoff the informer relists")
	return true
}
