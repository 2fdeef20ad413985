package main

// What only the workshop cluster can stage, on demand: the relist that
// opens step 4. Nothing here is part of the controller pattern. On a
// real cluster it prints one line saying it was skipped
// (TestRealClusterShape checks that).

import (
	"fmt"
)

// stageRelist makes the informer's re-watch get 410 Expired, so that
// it relists, and says so. It reports whether it could: kube-apiserver
// cannot be made to compact its watch cache on demand. informerRV is
// the resourceVersion the informer will ask to watch from.
func (s *steps) stageRelist(informerRV string) bool {
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
