package source

import (
	"path"
	"strings"
)

// Packages are the packages --source instruments: what the chapters
// teach (client-go's informer pipeline, its workqueue, leader election,
// the REST client and its watch decoder; controller-runtime's cache,
// client and controller for chapter 11). Every chapter is built with the
// same list, so that the instrumented client-go compiled for one chapter
// is in the build cache for the next; a chapter that does not import a
// package of the list simply has no counters for it.
//
// k8s.io/apimachinery's watch package is left out on purpose: the
// embedded workshop cluster runs in the same process and serves its
// watches through it, so its counters would mix the server's work with
// the client's.
var Packages = []string{
	"k8s.io/client-go/rest",
	"k8s.io/client-go/rest/watch",
	"k8s.io/client-go/tools/cache",
	"k8s.io/client-go/util/workqueue",
	"k8s.io/client-go/tools/leaderelection",
	"k8s.io/client-go/tools/leaderelection/resourcelock",
	"sigs.k8s.io/controller-runtime/pkg/cache",
	"sigs.k8s.io/controller-runtime/pkg/cache/internal",
	"sigs.k8s.io/controller-runtime/pkg/client",
	"sigs.k8s.io/controller-runtime/pkg/controller",
	"sigs.k8s.io/controller-runtime/pkg/internal/controller",
}

// Parts are the pipeline's parts in the order data flows through them:
// the order a step's report lists them in. The first ones are lanes of
// the trace (trace.Lanes).
var Parts = []string{
	"wire",
	"reflector",
	"FIFO",
	"informer loop",
	"store",
	"handlers",
	"workqueue",
	"leader election",
	"controller-runtime cache",
	"controller-runtime client",
	"controller-runtime controller",
}

// shown reports whether a chapter's report shows a file that ran (pkg is
// its package, file its name): what the chapter teaches, of Packages.
//
//   - The REST client (the wire) only in 01-watch and 03-reflector, which
//     teach the watch and the list on the wire; elsewhere its dozens of
//     request-building functions per step would bury the informer's.
//   - Never rest/watch/encoder.go: the embedded workshop cluster runs in
//     the same process and encodes its watch events with it, so what it
//     counts is the server's work, not the client's.
//
// The rest (the informer's pipeline, the workqueue, leader election,
// controller-runtime) runs only in the chapters that teach it. An
// unknown chapter (a test of this package) is shown everything.
func shown(chapter, pkg, file string) bool {
	if pkg == "k8s.io/client-go/rest/watch" && file == "encoder.go" {
		return false
	}
	if strings.HasPrefix(pkg, "k8s.io/client-go/rest") {
		switch chapter {
		case "01-watch", "03-reflector", "":
			return true
		}
		return false
	}
	return true
}

// part says which part of the pipeline a function belongs to: pkg is its
// package's import path, file its file's name, recv its receiver's type
// name ("" for a plain function).
func part(pkg, file, recv string) string {
	switch {
	case strings.HasPrefix(pkg, "k8s.io/client-go/rest"):
		return "wire"
	case pkg == "k8s.io/client-go/util/workqueue":
		return "workqueue"
	case strings.HasPrefix(pkg, "k8s.io/client-go/tools/leaderelection"):
		return "leader election"
	case strings.HasPrefix(pkg, "sigs.k8s.io/controller-runtime/pkg/cache"):
		return "controller-runtime cache"
	case pkg == "sigs.k8s.io/controller-runtime/pkg/client":
		return "controller-runtime client"
	case strings.HasPrefix(pkg, "sigs.k8s.io/controller-runtime/"):
		return "controller-runtime controller"
	}
	// tools/cache, by file, and shared_informer.go by receiver.
	switch {
	case strings.HasPrefix(file, "reflector"), file == "listwatch.go", file == "retry_with_deadline.go":
		return "reflector"
	case file == "the_real_fifo.go", file == "delta_fifo.go", file == "fifo.go":
		return "FIFO"
	case file == "thread_safe_store.go", file == "store.go", file == "index.go", file == "listers.go":
		return "store"
	}
	switch recv {
	case "sharedProcessor", "processorListener", "ResourceEventHandlerFuncs",
		"FilteringResourceEventHandler", "ResourceEventHandlerDetailedFuncs":
		return "handlers"
	}
	return "informer loop"
}

// partIndex is p's place in Parts (unknown parts last).
func partIndex(p string) int {
	for i, q := range Parts {
		if q == p {
			return i
		}
	}
	return len(Parts)
}

// shortPath is how a report names a file: its path in client-go
// ("tools/cache/reflector.go"), or with the module's last element before
// it for other modules ("controller-runtime/pkg/cache/informer_cache.go").
func shortPath(module, file string) string {
	if module == "k8s.io/client-go" {
		return file
	}
	return path.Base(module) + "/" + file
}
