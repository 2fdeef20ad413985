package main

// What the chapter needs only to show its informers at work, not what
// it teaches: one line for a pod or a cached object, the informer's
// request with its Accept header, the frames of a watch, and the lines
// step 5 prints of the calls the course's taps record (internal/tap: a
// reporting handler, and a Transform wrapped to record what it is given).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// printUnstructured prints what a dynamic lister returned: its type,
// the kind it keeps, and the Go types of a few of its map's values.
func printUnstructured(out io.Writer, u *unstructured.Unstructured) {
	fmt.Fprintf(out, "  the lister returns %T, kind=%s apiVersion=%s\n", u, u.GetKind(), u.GetAPIVersion())
	fmt.Fprintf(out, "  the cache holds its map: Object is a %T\n", u.Object)
	for _, field := range []string{"spec", "spec.replicas", "spec.paused", "spec.template.spec.containers"} {
		v, _, _ := unstructured.NestedFieldNoCopy(u.Object, strings.Split(field, ".")...)
		fmt.Fprintf(out, "    %-31s %T\n", field, v)
	}
}

// fieldsOf lists the fields of a struct type.
func fieldsOf(v any) string {
	t := reflect.TypeOf(v)
	names := make([]string, t.NumField())
	for i := range names {
		names[i] = t.Field(i).Name
	}
	return strings.Join(names, ", ")
}

// printMetadata prints what a metadata lister returned: its type, the
// kind it does not keep, its fields, and what they hold. It leaves out
// what differs from run to run and between clusters (uid, times, the
// field manager's name, which is the program's).
func printMetadata(out io.Writer, m *metav1.PartialObjectMetadata) {
	fmt.Fprintf(out, "  the lister returns %T, kind=%q apiVersion=%q\n", m, m.Kind, m.APIVersion)
	fmt.Fprintf(out, "  its fields: %s: no spec, no status\n", fieldsOf(*m))
	fmt.Fprintf(out, "    %-16s %s\n", "labels", pairs(m.Labels))
	fmt.Fprintf(out, "    %-16s %s\n", "annotations", pairs(m.Annotations))
	fmt.Fprintf(out, "    %-16s %s\n", "ownerReferences", ownerOf(m))
	for _, f := range m.ManagedFields {
		var set map[string]any
		if f.FieldsV1 != nil {
			_ = json.Unmarshal(f.FieldsV1.Raw, &set)
		}
		fmt.Fprintf(out, "    %-16s %s of %s\n", "managedFields",
			f.Operation, strings.Join(slices.Sorted(maps.Keys(set)), " "))
	}
	fmt.Fprintf(out, "    %-16s %d\n", "generation", m.Generation)
}

// pairs prints a map as sorted key=value pairs.
func pairs(m map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k+"="+m[k])
	}
	return strings.Join(kv, ",")
}

// ownerOf names an object's owners as Kind/name.
func ownerOf(m metav1.Object) string {
	var owners []string
	for _, o := range m.GetOwnerReferences() {
		s := o.Kind + "/" + o.Name
		if o.Controller != nil && *o.Controller {
			s += " (controller)"
		}
		owners = append(owners, s)
	}
	return strings.Join(owners, ",")
}

// printAccept prints the informer's requests and the Accept header of
// each, one media range a line.
func printAccept(out io.Writer, reqs []apiserver.Request) {
	for _, r := range reqs {
		if !show.ListsAndWatches(r) {
			continue
		}
		fmt.Fprintf(out, "  %s\n", r)
		for i, accept := range strings.Split(r.Accept, ",") {
			label := "Accept:"
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(out, "    %-7s %s\n", label, strings.TrimSpace(accept))
		}
	}
}

// printFrames prints the answer to a watch-list: the status and the
// content type, then its first n frames, the initial objects sorted
// (their order is the server's), each shortened after its
// resourceVersion, and what keys every object has.
func printFrames(out io.Writer, resp *http.Response, n int) error {
	fmt.Fprintf(out, "  the same request by hand, asking for JSON: %s, Content-Type: %s\n",
		resp.Status, resp.Header.Get("Content-Type"))
	// One frame per line; a frame holds a whole object.
	frames := bufio.NewScanner(resp.Body)
	frames.Buffer(nil, 4<<20)
	var lines []string
	keys := map[string]bool{}
	for range n {
		if !frames.Scan() {
			return errors.Join(errors.New("watch stream ended early"), frames.Err())
		}
		var ev struct{ Object map[string]json.RawMessage }
		if err := json.Unmarshal(frames.Bytes(), &ev); err != nil {
			return err
		}
		keys[strings.Join(slices.Sorted(maps.Keys(ev.Object)), " ")] = true
		lines = append(lines, show.Frame(frames.Text()))
	}
	slices.Sort(lines[:n-1]) // the last is the bookmark
	show.Print(out, "  ", lines)
	fmt.Fprintf(out, "  keys of every object: %s: no spec, no status\n",
		strings.Join(slices.Sorted(maps.Keys(keys)), " | "))
	return nil
}

// withManagedFields is one line for what an informer hands over: a pod with the
// number of managedFields entries it carries, or a tombstone.
func withManagedFields(obj any) string {
	switch o := obj.(type) {
	case *corev1.Pod:
		s := fmt.Sprintf("pod/%s managedFields=%d", o.Name, len(o.ManagedFields))
		if o.DeletionTimestamp != nil {
			s += " deletionTimestamp set"
		}
		return s
	case cache.DeletedFinalStateUnknown:
		return "DeletedFinalStateUnknown " + o.Key
	}
	return fmt.Sprintf("%T", obj)
}

// resyncPeriod is the informer's resync period in step 5: short, so
// the step sees a resync at once.
const resyncPeriod = 20 * time.Millisecond

// recordCalls returns the recorder step 5's taps record into. A resync
// comes every resyncPeriod: whether one reaches web-2 before the step
// deletes it depends on the run, so the trace's golden text leaves such
// a call out (the page shows it).
func recordCalls(ctx context.Context) *tap.Recorder {
	trace.MarkMaybe(func(e trace.Event) bool {
		return e.Lane == trace.Handlers && e.Timed && strings.HasSuffix(e.Key, "/web-2")
	})
	return tap.NewRecorder(ctx)
}

// transformLine is a Transform call as step 5 prints it: what the
// Transform was given.
func transformLine(t tap.Transformed) string { return "Transform(" + withManagedFields(t.Obj) + ")" }

// callLine is a handler call as step 5 prints it.
func callLine(c tap.HandlerCall) string { return c.Method + "(" + withManagedFields(c.Obj) + ")" }

// printAwaited prints the next nt Transform calls and the next nc
// handler calls, each in the order they came, or, for an initial list,
// whose order is not defined, sorted: the Transform calls by pass (first
// what came from the server, then what the first pass had already
// transformed), then by name. A resync's calls (OnUpdate with the very
// same object) come every resyncPeriod, between the others: skipped.
func printAwaited(ctx context.Context, out io.Writer, initial bool, rec *tap.Recorder, nt, nc int) error {
	var t, h []string
	for len(t) < nt || len(h) < nc {
		e, err := rec.Next(ctx)
		if err != nil {
			show.Print(out, "    ", append(t, h...))
			return err
		}
		switch e := e.(type) {
		case tap.Transformed:
			t = append(t, transformLine(e))
		case tap.HandlerCall:
			if !e.Same() {
				h = append(h, callLine(e))
			}
		}
	}
	if initial {
		slices.Sort(t)
		slices.SortStableFunc(t, func(a, b string) int {
			return strings.Compare(pass(a), pass(b))
		})
		slices.Sort(h)
	}
	show.Print(out, "    ", append(t, h...))
	return nil
}

// pass tells a Transform call that received its own output (no
// managedFields left) from one that received an object from the server.
func pass(line string) string {
	if strings.Contains(line, "managedFields=0") {
		return "second"
	}
	return "first"
}

// printResync waits for a resync, which starts after every change has
// been handled (printAwaited saw them), prints its call, and the number
// of Transform calls since the delete.
func printResync(ctx context.Context, out io.Writer, rec *tap.Recorder) error {
	transforms := 0
	for {
		e, err := rec.Next(ctx)
		if err != nil {
			return fmt.Errorf("waiting for a resync: %w", err)
		}
		if _, ok := e.(tap.Transformed); ok {
			transforms++
		}
		if c, ok := e.(tap.HandlerCall); ok && c.Same() {
			fmt.Fprintf(out, "    OnUpdate(%s) with old == new\n", withManagedFields(c.Obj))
			break
		}
	}
	for _, e := range rec.Drain() {
		if _, ok := e.(tap.Transformed); ok {
			transforms++
		}
	}
	fmt.Fprintf(out, "    Transform calls since the delete: %d\n", transforms)
	return nil
}

// printCacheThenServer prints what the cache had, what the GET
// brought, and the requests it took.
func printCacheThenServer(out io.Writer, m *metav1.PartialObjectMetadata, pod *corev1.Pod, reqs []apiserver.Request) {
	fmt.Fprintf(out, "  cache (GetByKey): %s labels=%s owner=%s\n", m.Name, pairs(m.Labels), ownerOf(m))
	fmt.Fprintf(out, "  server (Get):     %s image=%s phase=%s\n", pod.Name, pod.Spec.Containers[0].Image, pod.Status.Phase)
	show.Print(out, "  request: ", show.Requests(reqs, nil))
}

// typeName is what a cache holds, as %T prints it, and whether its
// objects still carry managedFields.
func typeName(obj any) string {
	s := fmt.Sprintf("%T", obj)
	if m, err := meta.Accessor(obj); err == nil && len(m.GetManagedFields()) == 0 {
		s += ", no managedFields"
	}
	return s
}
