package main

// What the chapter needs to *show* the informers at work, and nothing of
// what it teaches: the --pods flag, the opt-out of watch-list, the
// handler that reports changes, and the printing of requests and shards.
// The informers, the selectors and every call made on them are in
// main.go.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver/shardparse"
	"github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// podCount is how many pods the chapter creates: --pods N. The golden
// run uses the default; README's table was measured with larger ones.
var podCount = pods(40)

// extras is what this chapter adds to every chapter's main: its --pods
// flag, and a workshop cluster with the ShardedListAndWatch gate on
// (kube-apiserver's parser of shardSelector, from shardparse). A real
// cluster has the gate as its administrator set it.
var extras = cluster.Extras{
	Flags: func(fs *flag.FlagSet) {
		fs.Var(&podCount, "pods", "create `N` pods, 1 to 100000 (the README's table used 1000 to 50000)")
	},
	Server: apiserver.Options{ShardSelectors: shardparse.Parse},
}

// pods is --pods: a number of pods from 1 to 100000.
type pods int

func (p *pods) String() string { return strconv.Itoa(int(*p)) }

func (p *pods) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 100000 {
		return errors.New("want a number of pods from 1 to 100000")
	}
	*p = pods(n)
	return nil
}

// listThenWatch opts a ListWatch out of watch-list, as chapter 03 does:
// the reflector asks IsWatchListSemanticsUnSupported when it is built.
type listThenWatch struct{ *cache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// printSync prints how an informer synced: the requests it made and how
// many pods it holds.
func printSync(out io.Writer, watchList bool, held int, reqs []apiserver.Request) {
	how := "LIST, then WATCH"
	if watchList {
		how = "watch-list"
	}
	lines := show.Requests(reqs, show.ListsAndWatches)
	fmt.Fprintf(out, "  %s: synced %d pods; its requests (%d):\n", how, held, len(lines))
	show.Print(out, "    ", lines)
}

// reportChanges reports the updates and deletes an informer of shard i
// sees, as "i update name" and "i delete name".
func reportChanges(i int, lines *show.Lines) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			lines.Sendf("%d update %s", i, obj.(*corev1.Pod).Name)
		},
		DeleteFunc: func(obj any) {
			key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			lines.Sendf("%d delete %s", i, key)
		},
	}
}

// awaitDeleted awaits the reported changes up to the first delete.
func awaitDeleted(ctx context.Context, changes *show.Lines) ([]string, error) {
	var got []string
	for {
		line, err := changes.Await(ctx, 1)
		if err != nil {
			return got, err
		}
		got = append(got, line...)
		if strings.Contains(line[0], " delete ") {
			return got, nil
		}
	}
}

// shardsOf names the shards that reported lines, e.g. "1", or "0 and 2".
func shardsOf(lines []string) string {
	var shards []string
	for _, l := range lines {
		i, _, _ := strings.Cut(l, " ")
		if !slices.Contains(shards, i) {
			shards = append(shards, i)
		}
	}
	return strings.Join(shards, " and ")
}

// printShards prints how many pods each shard's informer holds, checks
// that each pod is in the shard its uid's hash names, and that the
// shards are disjoint and together every pod.
func printShards(out io.Writer, shards []sharding.Selector, stores []cache.Store) error {
	seen := map[string]int{}
	for i, store := range stores {
		objs := store.List()
		for _, obj := range objs {
			pod := obj.(*corev1.Pod)
			if ok, err := shards[i].Matches(pod); err != nil || !ok {
				return fmt.Errorf("shard %d holds %s, whose uid hash %s is not in its range", i, pod.Name, sharding.HashField(string(pod.UID)))
			}
			seen[pod.Name]++
		}
		req := shards[i].Requirements()[0]
		fmt.Fprintf(out, "    shard %d [%s, %s): %d pods\n", i, req.Start, req.End, len(objs))
	}
	twice := 0
	for _, n := range seen {
		if n > 1 {
			twice++
		}
	}
	fmt.Fprintf(out, "    together %d pods, %d in more than one shard: each pod is where its uid's hash is\n", len(seen), twice)
	return nil
}

// printIgnored says that the server ignored the shard selector.
func printIgnored(out io.Writer) error {
	fmt.Fprintln(out, "  the server ignored shardSelector (no metadata.shardInfo): "+
		"its ShardedListAndWatch gate is off, so every shard would hold every pod")
	return nil
}

// printHonoured says that the server honoured it, and how it said so.
func printHonoured(out io.Writer, info *metav1.ShardInfo) {
	fmt.Fprintf(out, "  the server honours shardSelector: its list says shardInfo %q\n", info.Selector)
}
