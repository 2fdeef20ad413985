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
	"path/filepath"
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
	path      string // where the file goes once written whole
	srv       *http.Server
	ln        net.Listener
	served    sync.WaitGroup // the server's Serve
	connected chan struct{}  // closed when a page first connects
	connOnce  sync.Once
	stderr    io.Writer
	chapter   string

	mu      sync.Mutex     // guards closed and streams' Add against Wait
	closed  bool           // Finish has begun: no new stream
	streams sync.WaitGroup // live streams being sent
	closing chan struct{}  // closed when the server stops
}

// Start begins recording. Every check that can refuse a flag is made
// here, before the chapter runs, so a refused flag costs no work and
// touches nothing: the port is bound now, and the trace is written to a
// new file beside FILE (which must be a place one can write), renamed
// to FILE once it is whole, so a run that fails or is killed leaves
// FILE as it was. The error is one line.
func Start(o Options, stderr io.Writer) (*Session, error) {
	s := &Session{rec: New(o.Chapter), stderr: stderr, chapter: o.Chapter, connected: make(chan struct{}), closing: make(chan struct{})}
	if o.ViewPort >= 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.ViewPort)))
		if err != nil {
			return nil, fmt.Errorf("--view: cannot serve the page: %w", err)
		}
		s.ln = ln
		s.rec.live = true
	}
	if o.File != "" {
		if fi, err := os.Stat(o.File); err == nil && fi.IsDir() {
			s.closeListener()
			return nil, fmt.Errorf("--trace: cannot write the trace: %s is a directory", o.File)
		}
		f, err := os.CreateTemp(filepath.Dir(o.File), "."+filepath.Base(o.File)+".*")
		if err != nil {
			s.closeListener()
			return nil, fmt.Errorf("--trace: cannot write the trace: %w", pathErr(o.File, err))
		}
		_ = f.Chmod(0o644) // as os.Create would leave it, not CreateTemp's 0600
		s.file, s.path = f, o.File
	}
	uninstall, err := Install(s.rec)
	if err != nil {
		s.closeListener()
		s.removeFile()
		return nil, err
	}
	s.uninstall = uninstall
	if s.ln != nil {
		s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 5 * time.Second}
		s.served.Go(func() { _ = s.srv.Serve(s.ln) })
	}
	return s, nil
}

// pathErr words a failure to create a file beside path as one for path
// itself: "open /no/such/dir/t.html: no such file or directory".
func pathErr(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return &os.PathError{Op: "open", Path: path, Err: pe.Err}
	}
	return err
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

// Finish ends the recording: the trace is written and put in place,
// live pages are sent the rest of the run and its end, then the server
// stops. The error, if any, is one line.
func (s *Session) Finish() error {
	s.rec.End()
	s.uninstall()
	var err error
	if s.file != nil {
		werr := WriteHTML(s.file, s.rec.Trace())
		werr = errors.Join(werr, s.file.Close())
		if werr == nil {
			werr = os.Rename(s.file.Name(), s.path)
		}
		if werr != nil {
			_ = os.Remove(s.file.Name())
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
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	close(s.closing)
	_ = s.srv.Close()
	s.served.Wait()
	s.streams.Wait()
}

func (s *Session) closeListener() {
	if s.ln != nil {
		_ = s.ln.Close()
	}
}

func (s *Session) removeFile() {
	if s.file != nil {
		_ = s.file.Close()
		_ = os.Remove(s.file.Name())
	}
}

// WriteHTML writes t as one self-contained page: the page, with the
// trace in it (page.Offline: gzip, base64).
func WriteHTML(w io.Writer, t Trace) error {
	raw, err := json.Marshal(t)
	if err != nil {
		return err
	}
	_, err = w.Write(page.HTML(page.Offline(raw)))
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
		_, _ = w.Write(page.HTML(page.Live("/events")))
	})
	mux.HandleFunc("GET /events", s.events)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil || (host != "127.0.0.1" && host != "localhost") {
			http.Error(w, "this page is served to 127.0.0.1 only", http.StatusForbidden)
			return
		}
		// Nor to another site's page, which could start the chapter
		// by opening the stream (it could not read it).
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			http.Error(w, "this page is not served to other sites", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// events sends the live stream as Server-Sent Events: everything so
// far, then each message as it is recorded, until the run's end.
func (s *Session) events(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "the run has ended", http.StatusServiceUnavailable)
		return
	}
	s.streams.Add(1)
	s.mu.Unlock()
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
