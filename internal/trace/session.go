package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace/page"
)

// Options are the runner's --view and --trace.
type Options struct {
	Chapter string
	// View serves the live page on 127.0.0.1: ViewPort, or a free port
	// if 0 (--view), none if -1.
	ViewPort int
	// File is where the replayable page is written when the run ends
	// (--trace FILE.html); "" for none.
	File string
}

// Session is a run being recorded: the recorder installed, the trace
// file open, the live page served.
type Session struct {
	rec       *Recorder
	uninstall func()
	file      *os.File
	srv       *http.Server
	ln        net.Listener
	served    sync.WaitGroup // the server's Serve
	streams   sync.WaitGroup // live streams being sent
	connected chan struct{}  // closed when a page first connects
	connOnce  sync.Once
	stderr    io.Writer
	chapter   string
	closing   chan struct{}
}

// Start begins recording. Every check that can refuse a flag is made
// here, before the chapter runs, so a refused flag costs no work: the
// trace file is created (and emptied) now, the port bound now. The error
// is one line.
func Start(o Options, stderr io.Writer) (*Session, error) {
	s := &Session{rec: New(o.Chapter), stderr: stderr, chapter: o.Chapter, connected: make(chan struct{}), closing: make(chan struct{})}
	if o.File != "" {
		f, err := os.Create(o.File)
		if err != nil {
			return nil, fmt.Errorf("--trace: cannot write the trace: %w", err)
		}
		s.file = f
	}
	if o.ViewPort >= 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.ViewPort)))
		if err != nil {
			s.closeFile()
			return nil, fmt.Errorf("--view: cannot serve the page: %w", err)
		}
		s.ln = ln
		s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 5 * time.Second}
		s.served.Go(func() { _ = s.srv.Serve(ln) })
	}
	uninstall, err := Install(s.rec)
	if err != nil {
		s.stop()
		s.closeFile()
		return nil, err
	}
	s.uninstall = uninstall
	return s, nil
}

// URL is the live page's address, or "" without --view.
func (s *Session) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String() + "/"
}

// WaitForPage waits until a page has connected to the live stream, or ctx
// ends: with --view the chapter starts once someone watches it.
func (s *Session) WaitForPage(ctx context.Context) error {
	if s.ln == nil {
		return nil
	}
	select {
	case <-s.connected:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Writer returns w, with every line written through it recorded as the
// chapter's output (its step headings begin the timeline's steps).
func (s *Session) Writer(w io.Writer) io.Writer { return Tap(w, s.rec) }

// Tap returns w, with every line written through it recorded by rec as
// the chapter's output.
func Tap(w io.Writer, rec *Recorder) io.Writer { return &lineTap{w: w, rec: rec} }

// Recorder is the session's recorder.
func (s *Session) Recorder() *Recorder { return s.rec }

// drain is how long Finish lets open pages receive the end of the run.
const drain = 2 * time.Second

// Finish ends the recording: the trace file is written and closed, live
// pages are sent the rest of the run and its end, then the server stops.
// The error, if any, is one line.
func (s *Session) Finish() error {
	s.rec.End()
	s.uninstall()
	var err error
	if s.file != nil {
		werr := WriteHTML(s.file, s.rec.Trace())
		cerr := s.file.Close()
		if werr = errors.Join(werr, cerr); werr != nil {
			err = fmt.Errorf("--trace: cannot write the trace: %w", werr)
		}
	}
	if s.srv != nil {
		done := make(chan struct{})
		go func() { s.streams.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(drain):
		}
		s.stop()
	}
	return err
}

func (s *Session) stop() {
	if s.srv == nil {
		return
	}
	close(s.closing)
	_ = s.srv.Close()
	s.served.Wait()
	s.streams.Wait()
}

func (s *Session) closeFile() {
	if s.file != nil {
		name := s.file.Name()
		_ = s.file.Close()
		_ = os.Remove(name) // created by Start, nothing in it
	}
}

// WriteHTML writes t as one self-contained page: the page, with the
// trace in it as gzip, base64.
func WriteHTML(w io.Writer, t Trace) error {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression) // a valid level
	if err := json.NewEncoder(zw).Encode(t); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	inject := `<script id="trace-data" type="application/gzip+base64">` +
		base64.StdEncoding.EncodeToString(z.Bytes()) + `</script>`
	_, err := w.Write(page.HTML(inject))
	return err
}

// traceData is where WriteHTML puts the trace.
var traceData = regexp.MustCompile(`<script id="trace-data" type="application/gzip\+base64">([^<]*)</script>`)

// ReadHTML reads back the trace of a page WriteHTML wrote.
func ReadHTML(page []byte) (Trace, error) {
	var t Trace
	m := traceData.FindSubmatch(page)
	if m == nil {
		return t, errors.New("no trace in the page")
	}
	z, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		return t, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return t, err
	}
	err = json.NewDecoder(zr).Decode(&t)
	return t, err
}

// handler serves the live page: the page at /, its stream at /events.
// Read-only: GET only, and only for a Host that names the loopback
// address it listens on (a web page elsewhere cannot read it through a
// name it controls).
func (s *Session) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(page.HTML(`<script>window.TRACE_LIVE = "/events";</script>`))
	})
	mux.HandleFunc("GET /events", s.events)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil || (host != "127.0.0.1" && host != "localhost") {
			http.Error(w, "this page is served to 127.0.0.1 only", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// events sends the live stream as Server-Sent Events: everything so
// far, then each message as it is recorded, until the run's end.
func (s *Session) events(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.closing:
		http.Error(w, "the run has ended", http.StatusServiceUnavailable)
		return
	default:
	}
	s.streams.Add(1)
	defer s.streams.Done()
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	s.connOnce.Do(func() { close(s.connected) })
	for next := 0; ; {
		msgs, more := s.rec.Messages(next)
		for _, m := range msgs {
			data, _ := json.Marshal(m) // plain data
			if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
				s.disconnected()
				return
			}
			if m.Type == "end" {
				if flusher != nil {
					flusher.Flush()
				}
				return
			}
		}
		next += len(msgs)
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-more:
		case <-r.Context().Done():
			s.disconnected()
			return
		case <-s.closing:
			return
		}
	}
}

// disconnected says, once per page, that a page went away mid-run: the
// chapter goes on, and the page can reconnect.
func (s *Session) disconnected() {
	fmt.Fprintf(s.stderr, "%s: --view: the page disconnected; the run goes on (reload the page to follow it again)\n", s.chapter)
}

// lineTap records each whole line written through it.
type lineTap struct {
	mu      sync.Mutex
	w       io.Writer
	rec     *Recorder
	partial []byte
}

func (t *lineTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, err := t.w.Write(p)
	t.partial = append(t.partial, p[:n]...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.rec.Output(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
	}
	return n, err
}
