package main

// The removal of the memos the chapter creates (newMemo, in main.go):
// every one carries the course's label, so that a real cluster's other
// memos are never touched.

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-walkthrough/informer-walkthrough/13-generated/generated/clientset/versioned"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
)

// notes is how many more memos step 6 creates, so that its per-memo
// figures are not noise.
const notes = 100

// own selects the course's objects: every list and watch of the chapter
// asks for them only.
var own = metav1.ListOptions{LabelSelector: cluster.OwnSelector}

// deleteMemos deletes the course's memos in the namespace, leftovers of
// an interrupted run or this run's, also after Ctrl-C.
func deleteMemos(ctx context.Context, client versioned.Interface, ns string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	return client.CourseV1alpha1().Memos(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, own)
}
