package main

// The changes the steps make to give the controller work: the patches
// that change the Deployments (fixture.PausedDeployment), and the patch
// with which someone else changes a summary in step 3.

import (
	"fmt"
)

// releasePatch is a merge patch that sets the release label. It
// carries no resourceVersion: on a real cluster the deployment
// controller writes the status meanwhile, and an Update could conflict.
func releasePatch(release string) []byte {
	return fmt.Appendf(nil, `{"metadata":{"labels":{"release":%q}}}`, release)
}

// editedBy is the annotation someone else writes on a summary in
// step 3: any change gives the ConfigMap a new resourceVersion.
const editedBy = "walkthrough/edited-by"

// editPatch is a merge patch that someone else makes to a summary.
func editPatch(n int) []byte {
	return fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"someone else, edit %d"}}}`, editedBy, n)
}
