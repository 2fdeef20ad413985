package main

// The pods the steps start from: the counter's seed pods and step 5's
// probe pods.

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/fixture"
)

// seedPods are the pods every test of the counter starts from.
func seedPods(ns string) []runtime.Object {
	return []runtime.Object{newPod(ns, "web-1", "web"), newPod(ns, "api-1", "api")}
}

// newPod is a pod of an app, which no scheduler or kubelet will touch.
func newPod(ns, name, app string) *corev1.Pod {
	p := fixture.GatedPod(name, cluster.Labels("app", app))
	p.Namespace = ns
	return p
}

// probePod is a pod of no app, so that no counter counts it; its pick
// label is its name, for selectors.
func probePod(name string) *corev1.Pod {
	return fixture.GatedPod(name, cluster.Labels("pick", name))
}

// podsResource is what the fake's tracker files pods under.
var podsResource = corev1.SchemeGroupVersion.WithResource("pods")
