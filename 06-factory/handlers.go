package main

// The handlers chapter 06 adds to its informers. They do not print: they
// run on the informers' goroutines, so they report a line to a
// show.Lines, and the step prints in an order it controls.

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// deploymentHandler is written the way most code in the wild is: an
// untyped handler whose type assertions must also expect a
// DeletedFinalStateUnknown tombstone in OnDelete.
func deploymentHandler(events *show.Lines) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if d, ok := obj.(*appsv1.Deployment); ok {
				events.Send(deployLine("ADDED", d, initialNote(initial)))
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			// The deployment controller writes status even for a paused
			// deployment. Only a spec change bumps metadata.generation:
			// act on that, and the output is the same on a real cluster.
			old, ok1 := oldObj.(*appsv1.Deployment)
			d, ok2 := newObj.(*appsv1.Deployment)
			if ok1 && ok2 && old.Generation != d.Generation {
				events.Send(deployLine("UPDATED", d, ""))
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if d, ok := obj.(*appsv1.Deployment); ok {
				events.Send(deployLine("DELETED", d, ""))
			}
		},
	}
}

// podHandler uses the typed handlers new in client-go v0.37: no type
// assertions, and OnDelete gets a DeletedPod that says whether the
// final state is known.
func podHandler(events *show.Lines) corev1informers.PodDetailedHandlerFuncs {
	// !+podHandler
	return corev1informers.PodDetailedHandlerFuncs{
		AddFunc: func(p *corev1.Pod, initial bool) {
			events.Send(podLine("ADDED", p, initialNote(initial)))
		},
		UpdateFunc: func(_, p *corev1.Pod) {
			events.Send(podLine("UPDATED", p, deletingNote(p)))
		},
		DeleteFunc: func(d corev1informers.DeletedPod) {
			if d.FinalStateUnknown != nil || d.OptionalObj == nil {
				events.Send("DELETED   pod/" + d.GetName() + "  (final state unknown)")
				return
			}
			events.Send(podLine("DELETED", d.OptionalObj, ""))
		},
	}
	// !-podHandler
}

// updateHandler reports OnUpdate calls. The informer calls an update
// whose old and new resourceVersion are equal a sync: in this step, a
// resync. After a relist it is also an object that did not change, and
// reaches the same handlers (README, step 5).
func updateHandler(lines *show.Lines) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Pod)
			p, ok2 := newObj.(*corev1.Pod)
			if !ok1 || !ok2 {
				return
			}
			event := "UPDATED"
			if old.ResourceVersion == p.ResourceVersion {
				event = "RESYNC"
			}
			lines.Sendf("%-9s pod/%s  rv=%s->%s",
				event, p.Name, old.ResourceVersion, p.ResourceVersion)
		},
	}
}

// rvHandler reports the resourceVersion of each update of pod name.
func rvHandler(lines *show.Lines, name string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if p, ok := obj.(*corev1.Pod); ok && p.Name == name {
				lines.Send(p.ResourceVersion)
			}
		},
	}
}

// deployLine is what the deployment handler reports.
func deployLine(event string, d *appsv1.Deployment, note string) string {
	return withNote(fmt.Sprintf("%-9s deployment/%s  gen=%d  rv=%s",
		event, d.Name, d.Generation, d.ResourceVersion), note)
}

// podLine is what the pod handler reports.
func podLine(event string, p *corev1.Pod, note string) string {
	return withNote(fmt.Sprintf("%-9s pod/%s  rv=%s",
		event, p.Name, p.ResourceVersion), note)
}

func withNote(line, note string) string {
	if note == "" {
		return line
	}
	return line + "  (" + note + ")"
}

func initialNote(initial bool) string {
	if initial {
		return "initial list"
	}
	return ""
}

func deletingNote(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "deletionTimestamp set"
	}
	return ""
}
