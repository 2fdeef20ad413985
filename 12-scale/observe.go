package main

// What the chapter needs to *show* the informers at work, and nothing of
// what it teaches: the --pods flag, the opt-out of watch-list, the
// handler that reports changes, and the printing of requests and shards.
// The informers, the selectors and every call made on them are in
// main.go.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// podCount is how many pods the chapter creates: --pods N. The golden
// run uses the default; README's table was measured with larger ones.
var podCount = 40

func init() {
	// --pods is this chapter's own flag; the rest of the command line
	// is every chapter's (internal/runner), parsed by cluster.Main.
	fs := flag.NewFlagSet("12-scale", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("pods", podCount, "")
	var rest []string
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a != "--pods" && a != "-pods" && !strings.HasPrefix(a, "--pods=") && !strings.HasPrefix(a, "-pods=") {
			rest = append(rest, a)
			continue
		}
		pair := []string{a}
		if !strings.Contains(a, "=") && i+1 < len(args) {
			i++
			pair = append(pair, args[i])
		}
		if err := fs.Parse(pair); err != nil || *n < 1 || *n > 100000 {
			fmt.Fprintf(os.Stderr, "12-scale: --pods wants a number of pods from 1 to 100000 (%s)\n", strings.Join(pair, " "))
			os.Exit(1)
		}
	}
	podCount = *n
	os.Args = append(os.Args[:1], rest...)
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
