package main

// Step 5's table of probes, and the probes that watch. Each probe does
// one thing to pods, through any clientset's PodInterface, and says what
// came back; main.go holds the probes that write.

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// probe is one line of step 5: what it does, and the doing.
type probe struct {
	what string
	run  func(context.Context, corev1client.PodInterface) (string, error)
}

// probes are step 5's lines, in the order it prints them.
var probes = []probe{
	{"create, generateName", createPod},
	{"update the image", updateImage},
	{"update a stale copy", staleUpdate},
	{"watch, labelSelector", watchWith("label", metav1.ListOptions{LabelSelector: "pick=label-yes"})},
	{"watch, fieldSelector", watchWith("field", metav1.ListOptions{FieldSelector: "metadata.name=field-yes"})},
	{"delete, on a watch", deleteOnWatch},
	{"LIST, delete, WATCH", deleteBeforeWatch},
}

// watchWith watches, from the current resourceVersion, with a selector
// that picks pod <prefix>-yes; changes <prefix>-no, then <prefix>-yes;
// and says which change the watch delivers first.
func watchWith(prefix string, opts metav1.ListOptions) func(context.Context, corev1client.PodInterface) (string, error) {
	return func(ctx context.Context, pods corev1client.PodInterface) (string, error) {
		names := []string{prefix + "-no", prefix + "-yes"}
		rv, err := createAndList(ctx, pods, names...)
		if err != nil {
			return "", err
		}
		opts.ResourceVersion = rv
		w, err := pods.Watch(ctx, opts)
		if err != nil {
			return "", err
		}
		defer w.Stop()
		for _, name := range names {
			_, err := pods.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"changed":"yes"}}}`), metav1.PatchOptions{})
			if err != nil {
				return "", err
			}
		}
		got, err := eventsUntil(ctx, w, first)
		return firstOf(got), err
	}
}

// deleteOnWatch deletes a pod while a watch is open.
func deleteOnWatch(ctx context.Context, pods corev1client.PodInterface) (string, error) {
	rv, err := createAndList(ctx, pods, "deleted")
	if err != nil {
		return "", err
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		return "", err
	}
	defer w.Stop()
	if err := pods.Delete(ctx, "deleted", metav1.DeleteOptions{}); err != nil {
		return "", err
	}
	got, err := eventsUntil(ctx, w, is(watch.Deleted, "deleted"))
	return eventTypes(got), err
}

// deleteBeforeWatch is a reflector's LIST, a delete, then its WATCH
// from the list's resourceVersion. A create after the delete marks the
// end of what the watch has to say about the past.
func deleteBeforeWatch(ctx context.Context, pods corev1client.PodInterface) (string, error) {
	rv, err := createAndList(ctx, pods, "gone")
	if err != nil {
		return "", err
	}
	if err := pods.Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		return "", err
	}
	if _, err := pods.Create(ctx, probePod("after"), metav1.CreateOptions{}); err != nil {
		return "", err
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		return "", err
	}
	defer w.Stop()
	got, err := eventsUntil(ctx, w, is(watch.Added, "after"))
	return replayed(got), err
}

// createAndList creates pods and returns the resourceVersion of a LIST
// made after them.
func createAndList(ctx context.Context, pods corev1client.PodInterface, names ...string) (string, error) {
	for _, name := range names {
		if _, err := pods.Create(ctx, probePod(name), metav1.CreateOptions{}); err != nil {
			return "", err
		}
	}
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	return list.ResourceVersion, nil
}
