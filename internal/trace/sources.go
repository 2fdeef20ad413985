package trace

import "strconv"

// source is where a function is declared, at ClientGo (apimachinery at
// the same tag): module-relative path and line. TestSources checks each
// line against the module cache, so a bump of client-go that moves a
// function fails the test, which prints the new lines.
type source struct {
	module string // client-go or apimachinery
	path   string
	line   int
}

// sources are the functions an event can name (Event.Func), by the name
// a reader of client-go would give them.
var sources = map[string]source{
	// tools/cache/reflector.go
	"cache.(*Reflector).RunWithContext":             {"client-go", "tools/cache/reflector.go", 423},
	"cache.(*Reflector).ListAndWatchWithContext":    {"client-go", "tools/cache/reflector.go", 470},
	"cache.(*Reflector).watch":                      {"client-go", "tools/cache/reflector.go", 561},
	"cache.(*Reflector).list":                       {"client-go", "tools/cache/reflector.go", 674},
	"cache.(*Reflector).watchList":                  {"client-go", "tools/cache/reflector.go", 804},
	"cache.(*Reflector).syncWith":                   {"client-go", "tools/cache/reflector.go", 911},
	"cache.handleAnyWatch":                          {"client-go", "tools/cache/reflector.go", 972},
	"cache.(*Reflector).resyncChan":                 {"client-go", "tools/cache/reflector.go", 445},
	"cache.(*Reflector).setLastSyncResourceVersion": {"client-go", "tools/cache/reflector.go", 1105},
	// tools/cache/the_real_fifo.go
	"cache.(*RealFIFO).Add":      {"client-go", "tools/cache/the_real_fifo.go", 337},
	"cache.(*RealFIFO).Update":   {"client-go", "tools/cache/the_real_fifo.go", 349},
	"cache.(*RealFIFO).Delete":   {"client-go", "tools/cache/the_real_fifo.go", 363},
	"cache.(*RealFIFO).Pop":      {"client-go", "tools/cache/the_real_fifo.go", 390},
	"cache.(*RealFIFO).PopBatch": {"client-go", "tools/cache/the_real_fifo.go", 486},
	"cache.(*RealFIFO).Replace":  {"client-go", "tools/cache/the_real_fifo.go", 604},
	"cache.(*RealFIFO).Resync":   {"client-go", "tools/cache/the_real_fifo.go", 739},
	// tools/cache/delta_fifo.go
	"cache.(*DeltaFIFO).Add":     {"client-go", "tools/cache/delta_fifo.go", 386},
	"cache.(*DeltaFIFO).Update":  {"client-go", "tools/cache/delta_fifo.go", 395},
	"cache.(*DeltaFIFO).Delete":  {"client-go", "tools/cache/delta_fifo.go", 408},
	"cache.(*DeltaFIFO).Pop":     {"client-go", "tools/cache/delta_fifo.go", 562},
	"cache.(*DeltaFIFO).Replace": {"client-go", "tools/cache/delta_fifo.go", 619},
	"cache.(*DeltaFIFO).Resync":  {"client-go", "tools/cache/delta_fifo.go", 704},
	// tools/cache/controller.go
	"cache.(*controller).processLoop": {"client-go", "tools/cache/controller.go", 238},
	"cache.processDeltas":             {"client-go", "tools/cache/controller.go", 823},
	"cache.processDeltasInBatch":      {"client-go", "tools/cache/controller.go", 892},
	// tools/cache/store.go
	"cache.(*cache).Add":     {"client-go", "tools/cache/store.go", 255},
	"cache.(*cache).Update":  {"client-go", "tools/cache/store.go", 271},
	"cache.(*cache).Delete":  {"client-go", "tools/cache/store.go", 287},
	"cache.(*cache).Replace": {"client-go", "tools/cache/store.go", 369},
	// tools/cache/shared_informer.go
	"cache.(*sharedIndexInformer).OnAdd":    {"client-go", "tools/cache/shared_informer.go", 1083},
	"cache.(*sharedIndexInformer).OnUpdate": {"client-go", "tools/cache/shared_informer.go", 1091},
	"cache.(*sharedIndexInformer).OnDelete": {"client-go", "tools/cache/shared_informer.go", 1113},
	"cache.(*sharedProcessor).distribute":   {"client-go", "tools/cache/shared_informer.go", 1236},
	"cache.(*processorListener).add":        {"client-go", "tools/cache/shared_informer.go", 1437},
	"cache.(*processorListener).run":        {"client-go", "tools/cache/shared_informer.go", 1478},
	// util/workqueue
	"workqueue.(*Typed[T]).Add":                       {"client-go", "util/workqueue/queue.go", 227},
	"workqueue.(*Typed[T]).Get":                       {"client-go", "util/workqueue/queue.go", 265},
	"workqueue.(*Typed[T]).Done":                      {"client-go", "util/workqueue/queue.go", 289},
	"workqueue.(*Typed[T]).ShutDown":                  {"client-go", "util/workqueue/queue.go", 307},
	"workqueue.(*delayingType[T]).AddAfter":           {"client-go", "util/workqueue/delaying_queue.go", 249},
	"workqueue.(*rateLimitingType[T]).AddRateLimited": {"client-go", "util/workqueue/rate_limiting_queue.go", 137},
	"workqueue.(*rateLimitingType[T]).Forget":         {"client-go", "util/workqueue/rate_limiting_queue.go", 145},
	// rest/request.go
	"rest.(*Request).Watch":   {"client-go", "rest/request.go", 760},
	"rest.(*Request).request": {"client-go", "rest/request.go", 1032},
	"rest.(*Request).Do":      {"client-go", "rest/request.go", 1131},
	"rest.(*Request).DoRaw":   {"client-go", "rest/request.go", 1151},
	"rest.(*Request).Stream":  {"client-go", "rest/request.go", 894},
	// apimachinery
	"watch.(*StreamWatcher).receive": {"apimachinery", "pkg/watch/streamwatcher.go", 109},
	// tools/cache, for the chapters' taps
	"cache.(*cache).Transaction":     {"client-go", "tools/cache/store.go", 220},
	"cache.(*DeltaFIFO).Close":       {"client-go", "tools/cache/delta_fifo.go", 317},
	"cache.(*RealFIFO).Close":        {"client-go", "tools/cache/the_real_fifo.go", 188},
	"cache.(*RealFIFO).Bookmark":     {"client-go", "tools/cache/the_real_fifo.go", 585},
	"cache.processReplacedAllInfo":   {"client-go", "tools/cache/controller.go", 972},
	"cache.(*Reflector).startResync": {"client-go", "tools/cache/reflector.go", 514},
}

// Source is the link to the line that declares the function named name
// (a key of sources), at ClientGo; "" for a name it does not know.
func Source(name string) string {
	s, ok := sources[name]
	if !ok {
		return ""
	}
	return "https://github.com/kubernetes/" + s.module + "/blob/" + ClientGo + "/" + s.path + "#L" + strconv.Itoa(s.line)
}
