package cluster

import (
	"io"
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// lingeringBody is a watch's body whose Close, as an HTTP response
// body's, does not end a read already under way: what arrives after
// is still returned to that read.
type lingeringBody struct {
	frames chan string
	closed chan struct{}
}

func (b *lingeringBody) Read(p []byte) (int, error) {
	f, ok := <-b.frames
	if !ok {
		return 0, io.EOF
	}
	return copy(p, f), nil
}

func (b *lingeringBody) Close() error { close(b.closed); return nil }

// TestTracedStreamAfterClose: an event that a read returns once the
// stream's reader closed it reaches nobody (StreamWatcher.receive drops
// it), and whether the read returns it at all is a race with the server
// seeing the connection go; the wire lane records the events before the
// close, and the end, not it. (13-generated's trace golden once had one
// more MODIFIED in a step, sent to the watch its previous step stopped.)
func TestTracedStreamAfterClose(t *testing.T) {
	rec := trace.New("test")
	uninstall, err := trace.Install(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer uninstall()

	body := &lingeringBody{frames: make(chan string, 1), closed: make(chan struct{})}
	s := &tracedStream{ReadCloser: body, json: true, receiver: "watch.(*StreamWatcher).receive"}
	frame := func(typ, name string) string {
		return `{"type":"` + typ + `","object":{"kind":"ConfigMap","metadata":{"name":"` + name +
			`","namespace":"ns","resourceVersion":"7"}}}` + "\n"
	}
	buf := make([]byte, 4096)
	body.frames <- frame("ADDED", "before")
	if _, err := s.Read(buf); err != nil {
		t.Fatal(err)
	}
	// The next read is under way when the reader closes the stream;
	// the server, not yet knowing, sends the next step's change.
	read := make(chan string)
	go func() { // the StreamWatcher's receive
		n, _ := s.Read(buf)
		read <- string(buf[:n])
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	<-body.closed
	after := frame("MODIFIED", "after")
	body.frames <- after
	if got := <-read; got != after {
		t.Errorf("the read under way returned %q, want %q: relayed as it came", got, after)
	}

	var got []string
	for _, e := range rec.Trace().Events {
		if e.Lane == trace.Wire {
			got = append(got, e.Verb+" "+e.Text)
		}
	}
	want := []string{"ADDED configmap/before rv=7", "END watch stream ended"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("the wire lane recorded %q, want %q", got, want)
	}
}
