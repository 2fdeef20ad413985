package tap

import (
	"strings"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// Named returns a recorder for the taps of one of several like things
// (a replica of a controller, each with its own queue and client): the
// events its taps record come to r's step as From, in one order with
// the others', so that the step can tell whose they are and what
// happened between them. Its holds are its own.
func (r *Recorder) Named(name string) *Recorder {
	n := &Recorder{feed: r.feed, done: r.done, name: name}
	n.self = n
	return n
}

// From is an event a Named recorder's tap recorded.
type From struct {
	Name string    // the recorder's name
	Rec  *Recorder // the recorder: two may have one name
	Event
}

// Trace is the event's, its text led by whose it is.
func (f From) Trace() (trace.Event, any) {
	e, obj := f.Event.Trace()
	e.Text = strings.TrimSuffix(f.Name+": "+e.Text, ": ")
	return e, obj
}
