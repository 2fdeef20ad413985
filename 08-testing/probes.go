package main

// The probes of step 5. Each does one thing to pods, through any
// clientset's PodInterface, and says what came back; step 5 runs each
// on a new fake and on the cluster, and prints the two side by side.

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
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

// !+probes
// createPod shows what the server fills in: the name, defaults; and
// what it leaves out of what Create returns: kind.
func createPod(ctx context.Context, pods corev1client.PodInterface) (string, error) {
	p := probePod("")
	p.GenerateName = "gen-"
	p, err := pods.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("name=%q restart=%q kind=%q",
		masked(p.Name, "gen-"), p.Spec.RestartPolicy, p.Kind), nil
}

// updateImage changes a pod's spec, which bumps metadata.generation.
func updateImage(ctx context.Context, pods corev1client.PodInterface) (string, error) {
	p, err := pods.Create(ctx, probePod("image"), metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	before := fmt.Sprintf("rv=%q gen=%d", p.ResourceVersion, p.Generation)
	p.Spec.Containers[0].Image = "nginx:1.28"
	p, err = pods.Update(ctx, p, metav1.UpdateOptions{})
	return fmt.Sprintf("%s → rv=%q gen=%d", before, p.ResourceVersion, p.Generation), err
}

// staleUpdate: two writers read a pod, then both write it.
func staleUpdate(ctx context.Context, pods corev1client.PodInterface) (string, error) {
	p, err := pods.Create(ctx, probePod("stale"), metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	first, second := p.DeepCopy(), p.DeepCopy()
	first.Labels["writer"] = "first"
	if _, err := pods.Update(ctx, first, metav1.UpdateOptions{}); err != nil {
		return "", err
	}
	second.Labels["writer"] = "second"
	if _, err = pods.Update(ctx, second, metav1.UpdateOptions{}); apierrors.IsConflict(err) {
		return "the second gets 409 Conflict", nil
	}
	return "both accepted, first one lost", err
}

// !-probes

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
		got, err := eventsUntil(ctx, w, "")
		return "first: " + strings.Join(got, ""), err
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
	got, err := eventsUntil(ctx, w, "DELETED pod/deleted")
	return strings.ReplaceAll(strings.Join(got, ", "), " pod/deleted", ""), err
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
	got, err := eventsUntil(ctx, w, "ADDED pod/after")
	if len(got) == 1 {
		return "no event: the delete is lost", err
	}
	return strings.ReplaceAll(strings.Join(got[:len(got)-1], ", "), " pod/gone", "") + ", replayed", err
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

// probePod is a pod of no app, so that no counter counts it; its pick
// label is its name, for selectors.
func probePod(name string) *corev1.Pod {
	return show.GatedPod(name, cluster.Labels("pick", name))
}
