package tap

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// FIFO is a cache.Queue (a DeltaFIFO, a RealFIFO) that records each
// call made on it once it returned: a Pop with the entry it handed out,
// after the handler calls that processing it made (a Handler records
// them as they return). It embeds the queue it wraps,
// so HasSynced and IsClosed are the queue's own. NewFIFO makes one.
type FIFO struct {
	cache.Queue
	Rec *Recorder
	// Key names the object of a popped entry (FIFOCall.Key): the
	// queue's own KeyFunction.
	Key cache.KeyFunc
}

var _ cache.Queue = (*FIFO)(nil)

// BookmarkFIFO is a FIFO over a queue that takes bookmarks
// (cache.ReflectorBookmarkStore, as a RealFIFO does): wrapped, it
// still does, and the reflector still passes them on.
type BookmarkFIFO struct{ *FIFO }

var _ cache.ReflectorBookmarkStore = BookmarkFIFO{}

// NewFIFO wraps q: a *FIFO, or a BookmarkFIFO if q takes bookmarks, so
// that the wrapped queue answers a type assertion as q does.
func NewFIFO(q cache.Queue, rec *Recorder, key cache.KeyFunc) cache.Queue {
	f := &FIFO{Queue: q, Rec: rec, Key: key}
	if _, ok := q.(cache.ReflectorBookmarkStore); ok {
		return BookmarkFIFO{f}
	}
	return f
}

// FIFOCall is one call on a queue.
type FIFOCall struct {
	Queue  string // the queue's type, as %T says it: *cache.DeltaFIFO
	Method string // Add, Update, Delete, Replace, Resync, Bookmark, Close, Pop
	Obj    any    // what Add, Update or Delete was given
	List   []any  // what Replace was given
	// ResourceVersion is Replace's or Bookmark's.
	ResourceVersion string
	// Deltas is the entry Pop handed out, InInitialList what it passed
	// with it. Key is the key of Obj, or of the entry's object: "(all)"
	// for a ReplacedAll or a SyncAll, "-" for a Bookmark.
	Deltas        cache.Deltas
	InInitialList bool
	Key           string
	// Err is what the call returned: for a Pop, what process
	// returned, or, if it handed out nothing, why (ErrFIFOClosed).
	Err error
}

func (f *FIFO) call(c FIFOCall) FIFOCall {
	c.Queue = fmt.Sprintf("%T", f.Queue)
	return c
}

func (f *FIFO) Add(obj any) error {
	err := f.Queue.Add(obj)
	f.Rec.record(f.call(FIFOCall{Method: "Add", Obj: obj, Key: f.key(obj), Err: err}))
	return err
}

func (f *FIFO) Update(obj any) error {
	err := f.Queue.Update(obj)
	f.Rec.record(f.call(FIFOCall{Method: "Update", Obj: obj, Key: f.key(obj), Err: err}))
	return err
}

func (f *FIFO) Delete(obj any) error {
	err := f.Queue.Delete(obj)
	f.Rec.record(f.call(FIFOCall{Method: "Delete", Obj: obj, Key: f.key(obj), Err: err}))
	return err
}

func (f *FIFO) Replace(list []any, rv string) error {
	err := f.Queue.Replace(list, rv)
	f.Rec.record(f.call(FIFOCall{Method: "Replace", List: list, ResourceVersion: rv, Err: err}))
	return err
}

func (f *FIFO) Resync() error {
	err := f.Queue.Resync()
	f.Rec.record(f.call(FIFOCall{Method: "Resync", Err: err}))
	return err
}

func (f *FIFO) Close() {
	f.Queue.Close()
	f.Rec.record(f.call(FIFOCall{Method: "Close"}))
}

// Pop records the entry it handed out, once process has run on it; if
// it handed out none, why.
func (f *FIFO) Pop(process cache.PopProcessFunc) (any, error) {
	c := FIFOCall{Method: "Pop"}
	obj, err := f.Queue.Pop(func(obj any, isInInitialList bool) error {
		c.Deltas, _ = obj.(cache.Deltas)
		c.InInitialList, c.Key = isInInitialList, f.entryKey(c.Deltas)
		return process(obj, isInInitialList)
	})
	c.Err = err
	f.Rec.record(f.call(c))
	return obj, err
}

func (f BookmarkFIFO) Bookmark(rv string) error {
	err := f.Queue.(cache.ReflectorBookmarkStore).Bookmark(rv)
	f.Rec.record(f.call(FIFOCall{Method: "Bookmark", ResourceVersion: rv, Err: err}))
	return err
}

// entryKey names what a popped entry is about.
func (f *FIFO) entryKey(deltas cache.Deltas) string {
	if len(deltas) == 0 {
		return "?"
	}
	switch obj := deltas.Newest().Object.(type) {
	case cache.ReplacedAllInfo, cache.SyncAllInfo:
		return "(all)"
	case cache.BookmarkInfo:
		return "-"
	default:
		return f.key(obj)
	}
}

// key is obj's key by the Key function, "?" if it has none.
func (f *FIFO) key(obj any) string {
	key := f.Key
	if key == nil {
		key = cache.DeletionHandlingMetaNamespaceKeyFunc
	}
	k, err := key(obj)
	if err != nil {
		return "?"
	}
	return k
}

// String is the call as Go would write it, with its arguments as
// show.Describe gives them; a Pop, with the entry it handed out.
func (c FIFOCall) String() string {
	return strings.TrimSpace(c.Method + " " + c.text())
}

// text is the call's arguments, as String and the trace show them.
func (c FIFOCall) text() string {
	switch c.Method {
	case "Add", "Update", "Delete":
		return show.Describe(c.Obj)
	case "Replace":
		return fmt.Sprintf("%s  (rv %s)", show.List(c.List), c.ResourceVersion)
	case "Bookmark":
		return "rv " + c.ResourceVersion
	case "Pop":
		if len(c.Deltas) == 0 && c.Err != nil {
			if errors.Is(c.Err, cache.ErrFIFOClosed) {
				return "→ ErrFIFOClosed: closed and empty"
			}
			return "→ " + c.Err.Error()
		}
		s := c.Key + " " + show.Deltas(c.Deltas)
		if c.InInitialList {
			s += " isInInitialList"
		}
		return s
	}
	return ""
}

// Trace is the call on the FIFO lane, under the queue's method.
func (c FIFOCall) Trace() (trace.Event, any) {
	e := trace.Event{Lane: trace.FIFO, Verb: c.Method, Text: c.text(), Key: c.Key}
	e.Func = "cache.(*" + strings.TrimPrefix(c.Queue, "*cache.") + ")." + c.Method
	if trace.Source(e.Func) == "" {
		e.Func = "" // a method the sources do not link
	}
	obj := c.Obj
	if len(c.Deltas) > 0 {
		obj = c.Deltas.Newest().Object
	}
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		e.Key, obj = t.Key, t.Obj
	}
	switch obj.(type) {
	case cache.ReplacedAllInfo, cache.SyncAllInfo, cache.BookmarkInfo:
		obj = nil // the text says what it holds
	}
	return e, obj
}
