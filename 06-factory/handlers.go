package main

// The two event handlers of step 1, one in each style client-go offers.
// Each decides what it acts on and hands that, typed, to report: the
// course's reporting handler (internal/tap), which records the call for
// the step to print. A real program would update its own state or
// enqueue a key there (chapter 07).

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// deploymentHandler is written the way most code in the wild is: an
// untyped handler, whose type assertions must also expect a
// DeletedFinalStateUnknown tombstone in OnDelete.
func deploymentHandler(report cache.ResourceEventHandler) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if d, ok := obj.(*appsv1.Deployment); ok {
				report.OnAdd(d, initial)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			// The deployment controller writes status even for a paused
			// deployment. Only a spec change bumps metadata.generation:
			// act on that, and the output is the same on a real cluster.
			old, ok1 := oldObj.(*appsv1.Deployment)
			d, ok2 := newObj.(*appsv1.Deployment)
			if ok1 && ok2 && old.Generation != d.Generation {
				report.OnUpdate(old, d)
			}
		},
		DeleteFunc: func(obj any) {
			// A delete learnt from a relist comes as a tombstone that
			// holds the last state the informer knew.
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if d, ok := obj.(*appsv1.Deployment); ok {
				report.OnDelete(d)
			}
		},
	}
}

// podHandler uses the typed handlers new in client-go v0.37: no type
// assertions, and OnDelete gets a DeletedPod that says whether the
// final state is known.
func podHandler(report cache.ResourceEventHandler) corev1informers.PodDetailedHandlerFuncs {
	// !+podHandler
	return corev1informers.PodDetailedHandlerFuncs{
		AddFunc: func(p *corev1.Pod, initial bool) {
			report.OnAdd(p, initial)
		},
		UpdateFunc: func(old, p *corev1.Pod) {
			report.OnUpdate(old, p)
		},
		DeleteFunc: func(d corev1informers.DeletedPod) {
			// A delete learnt from a relist: OptionalObj is nil, the
			// tombstone holds the last state the informer knew.
			if d.FinalStateUnknown != nil {
				report.OnDelete(*d.FinalStateUnknown)
				return
			}
			report.OnDelete(d.OptionalObj)
		},
	}
	// !-podHandler
}
