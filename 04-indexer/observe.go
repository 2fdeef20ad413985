package main

// What the chapter needs only to print what it found: aligned rows,
// sorted keys and names, the indices map and the request log. Nothing
// here changes a store; main.go is the lesson.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/tap"
)

// table aligns the columns of each block of rows. A tabwriter writes a
// block out as soon as a line without a tab (a heading) ends it, so each
// step's heading appears as the step begins; run flushes the last block.
func table(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
}

// row prints "  what<TAB>result": the tabwriter aligns the results of
// consecutive rows. A []string result is joined, "(none)" if empty. A
// nil error is left out and any other error printed, so a read that
// fails says so in its row.
func row(w io.Writer, what string, result ...any) {
	var parts []string
	for _, r := range result {
		switch r := r.(type) {
		case nil:
		case []string:
			if len(r) == 0 {
				parts = append(parts, "(none)")
			} else {
				parts = append(parts, strings.Join(r, " "))
			}
		case error:
			parts = append(parts, errText(r))
		default:
			parts = append(parts, fmt.Sprint(r))
		}
	}
	fmt.Fprintf(w, "  %s\t%s\n", what, strings.Join(parts, ", "))
}

// errText is "no error" or "error: ...".
func errText(err error) string {
	if err == nil {
		return "no error"
	}
	return "error: " + err.Error()
}

// printPods prints the store's pods, one row each, by key.
func printPods(w io.Writer, idx cache.Indexer) error {
	names := slices.Sorted(maps.Keys(idx.GetIndexers()))
	fmt.Fprintf(w, "  indexers: %s\n", strings.Join(names, " "))
	fmt.Fprintln(w, "  pods (ListKeys has no order; sorted here):")
	fmt.Fprintln(w, "    key\tapp\tnode\timages")
	for _, key := range sorted(idx.ListKeys()) {
		p, err := getPod(idx, key)
		if err != nil {
			return err
		}
		imgs, err := imageIndex(p) // the images column: what the image index files it under
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "    %s\t%s\t%s\t%s\n", key,
			orDash(p.Labels["app"]), orDash(p.Spec.NodeName),
			strings.Join(imgs, " "))
	}
	return nil
}

// printPanics names the two panics of step 4.
func printPanics(w io.Writer) {
	fmt.Fprintln(w, "  panics to avoid (pinned in main_test.go):")
	fmt.Fprintln(w, "    NewIndexer(keyFunc, nil), then AddIndexers:")
	fmt.Fprintln(w, "      assignment to entry in nil map;")
	fmt.Fprintln(w, "      pass cache.Indexers{} to mean \"none yet\"")
	fmt.Fprintln(w, "    an IndexFunc that returns an error:")
	fmt.Fprintln(w, "      Add/Update/Delete/Replace panic with it")
}

// printIndices prints the line what, then reads the three maps back
// through the public API: GetIndexers for the names,
// ListIndexFuncValues for the values, IndexKeys for the set of keys
// under each value.
func printIndices(w io.Writer, what string, idx cache.Indexer) error {
	fmt.Fprintln(w, what)
	fmt.Fprintln(w, "    index\tvalue\tkeys")
	for _, name := range slices.Sorted(maps.Keys(idx.GetIndexers())) {
		for i, v := range sorted(idx.ListIndexFuncValues(name)) {
			keys, err := idx.IndexKeys(name, v)
			if err != nil {
				return err
			}
			label := name
			if i > 0 {
				label = "" // each index name once
			}
			fmt.Fprintf(w, "    %s\t%s\t%s\n",
				label, v, strings.Join(keys, " "))
		}
	}
	return nil
}

// printCost prints what a query found and how far the request log
// moved while it ran: from before to now.
func printCost(w io.Writer, what string, names []string, before int, c *cluster.Cluster) {
	fmt.Fprintf(w, "  %s\t%s\trequests %d -> %d\n",
		what, strings.Join(names, " "), before, len(c.Requests()))
}

// either is v, or err if the call that returned them failed.
func either[T any](v T, err error) any {
	if err != nil {
		return err
	}
	return v
}

// keysOf is the sorted keys of objs, or err. ByIndex and Index return
// objects in map order, so the chapter sorts what it prints.
func keysOf(objs []any, err error) any {
	keys := make([]string, 0, len(objs))
	for _, obj := range objs {
		k, kerr := cache.MetaNamespaceKeyFunc(obj)
		if kerr != nil {
			k = "?"
		}
		keys = append(keys, k)
	}
	return either(sorted(keys), err)
}

// withApp is keysOf with the app label each object carries now.
func withApp(objs []any, err error) any {
	var keys []string
	for _, obj := range objs {
		if p, ok := podFrom(obj); ok {
			keys = append(keys, p.Namespace+"/"+p.Name+
				"(app="+p.Labels["app"]+")")
		}
	}
	return either(sorted(keys), err)
}

// namesOf is the sorted names of objs, or err.
func namesOf(objs []any, err error) any { return either(show.Names(objs), err) }

// lastKnown names the pod a tombstone holds.
func lastKnown(p *corev1.Pod, ok bool) any {
	if !ok {
		return errors.New("no pod in the tombstone")
	}
	return p.Namespace + "/" + p.Name + " (last known state)"
}

// keyErrText is "KeyError" for a cache.KeyError: its message prints
// the object that could not be keyed with %+v, pointers included.
func keyErrText(err error) string {
	var keyErr cache.KeyError
	if errors.As(err, &keyErr) {
		return "KeyError"
	}
	return errText(err)
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// awaitLabel awaits the handler's calls (rec, a tap.Handler's) until
// one hands it the pod named name with label key=value: the informer's
// store holds that pod then, since client-go calls a handler after it
// updated the store.
func awaitLabel(ctx context.Context, rec *tap.Recorder, name, key, value string) error {
	for {
		e, err := rec.Next(ctx)
		if err != nil {
			return err
		}
		call, _ := e.(tap.HandlerCall)
		if p, ok := call.Obj.(*corev1.Pod); ok && p.Name == name && p.Labels[key] == value {
			return nil
		}
	}
}
