// Package browser checks the trace page in a real browser: headless Chromium
// driven from Go with chromedp. It loads a page (a --trace file or a --view
// server), steps through it with the keys a presenter uses, checks that the
// lanes, the step headings and the store show what the trace holds, fails on
// any console error or uncaught exception, and saves a screenshot.
//
// It is used only by tests. Where no Chromium can be found the test is
// skipped with one line that says how to get one.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Width and Height are the window the page is checked in: a projector's.
const (
	Width  = 1280
	Height = 720
)

// Expect is what the page must show once the cursor is at the end of the run.
type Expect struct {
	Lanes map[string]int    // lane name → events on it in the whole run
	Steps []string          // every step heading, in order
	Store map[string]string // the store at the end: key → resourceVersion

	// ScreenshotSeq, when > 0, moves the cursor to the last position whose
	// seq is at most this before the screenshot is taken; 0 takes it at the
	// end of the run.
	ScreenshotSeq int
}

// Find returns the Chromium to use: $CHROME, else /usr/bin/chromium, else
// chromium, chromium-browser or google-chrome in PATH; "" if there is none.
func Find() string {
	if c := os.Getenv("CHROME"); c != "" {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
		return ""
	}
	for _, c := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// Browser is one tab of headless Chromium, for one test.
type Browser struct {
	t      testing.TB
	ctx    context.Context
	tab    *tab // the tab of Main's Chromium it has, nil with a Chromium of its own
	stop   func()
	once   sync.Once
	mu     sync.Mutex
	errors []string // console errors and uncaught exceptions, in order
}

// shared is the Chromium that Main starts for a test binary: every Start
// opens its tab there. Without Main, each Start starts a Chromium of its own.
var shared struct {
	ctx context.Context // the browser's first tab: Start's tabs are its children
	err error           // why it could not start, reported by each Start

	mu   sync.Mutex
	idle []*tab // tabs a test has given back, for the next Start

	// tabs holds a token per tab in use: at most one per CPU at once.
	// A test package may run more tests in parallel than that (reliability
	// runs eight, which mostly wait on chapters): without the limit each
	// would open a tab of its own, a renderer that costs CPU to start and
	// competes with the others, where a test waiting its turn gets a tab
	// another has given back.
	tabs chan struct{}
}

// tab is a tab of Main's Chromium, in a browser context of its own. A
// test has it from Start until Close, then it goes back to shared.idle,
// on about:blank, for the next test: a new tab costs a renderer process
// (about 0.2 s of CPU to start), a page loaded in a tab that has one
// costs less than half of that. Tabs are closed with the browser.
type tab struct {
	ctx   context.Context
	close func() // closes the tab and disposes of its browser context
	mu    sync.Mutex
	owner *Browser // the Browser that has the tab now, which its events go to
}

// newTab opens a tab in Main's Chromium, in a browser context of its own,
// at Width×Height, listening to its console.
func newTab() (*tab, error) {
	ctx, cancel := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext())
	tb := &tab{ctx: ctx, close: cancel}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(Width, Height)); err != nil {
		cancel()
		return nil, fmt.Errorf("opening a tab: %w", err)
	}
	// Listen calls the func in the tab's own loop, in the order the
	// browser sent the events: once a later command has returned, every
	// message the page wrote before it has been seen.
	if err := chromedp.Listen(ctx, func(ev any) {
		tb.mu.Lock()
		b := tb.owner
		tb.mu.Unlock()
		if b != nil {
			b.onEvent(ev)
		}
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("listening to the console: %w", err)
	}
	return tb, nil
}

// Main runs a package's tests (m.Run) with one headless Chromium for all
// of them, and returns m.Run's exit code: use it as
// os.Exit(browser.Main(m)) in TestMain. Starting and stopping Chromium
// costs about a second of CPU (and more of waiting); a tab in a running
// one costs a fraction of that, and a tab in a browser context of its own
// shares no cookies, storage or cache with a tab of another. The browser,
// and one tab, start before the first test, so that their goroutines are
// there before any test's leak check looks (a test that ends gives its tab
// back for the next, see tab), and it stops after the last. Where no
// Chromium can be found, Main only runs the tests (and Start skips).
func Main(m *testing.M) int {
	exe := Find()
	if exe == "" {
		return m.Run()
	}
	ctx, stop := launch(context.Background(), exe)
	defer stop()
	shared.tabs = make(chan struct{}, goruntime.NumCPU())
	// The first action on the context starts the browser.
	shared.ctx = ctx
	if err := chromedp.Do(ctx); err != nil {
		shared.err = fmt.Errorf("starting %s: %w", exe, err)
	} else if tb, err := newTab(); err != nil {
		shared.err = fmt.Errorf("%s: %w", exe, err)
	} else {
		shared.idle = append(shared.idle, tb)
	}
	return m.Run()
}

// launch prepares headless Chromium at Width×Height, which ends with
// parent; the first action on the context it returns starts it. stop ends
// it and waits until its process and its temporary profile are gone.
func launch(parent context.Context, exe string) (ctx context.Context, stop func()) {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("force-color-profile", "srgb"),
		// Headless Chromium still makes each tab's window its browser
		// UI, and preloads the address bar's two WebUI popups there: two
		// more pages in a renderer process of their own, for every tab,
		// that nobody can see. They cost about as much CPU as the page
		// under test.
		chromedp.Flag("disable-features", "WebUIOmniboxPopup,WebUIOmniboxAimPopup"),
		chromedp.WindowSize(Width, Height),
		// No UserDataDir: the allocator makes a fresh temporary one and
		// removes it when the browser has ended.
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	return ctx, func() {
		cancelCtx()
		cancelAlloc() // waits for the browser process and its directory to go
	}
}

// Start gives the test a tab at Width×Height in the Chromium Main
// started (one a test before it gave back, on about:blank, or a new
// one), or, in a package that does not use Main, starts a Chromium of
// its own; it skips the test when there is none. The tab is the test's
// until Close, which the test's end calls if the test has not.
func Start(t testing.TB) *Browser {
	t.Helper()
	exe := Find()
	if exe == "" {
		if c := os.Getenv("CHROME"); c != "" {
			t.Skipf("no Chromium found: $CHROME is %q, which is not a program; unset it or install one (apt-get install chromium)", c)
		}
		t.Skip("no Chromium found ($CHROME, /usr/bin/chromium, chromium, chromium-browser, google-chrome): the browser check needs one, e.g. apt-get install chromium")
	}
	b := &Browser{t: t}
	if shared.ctx != nil {
		if shared.err != nil {
			t.Fatal(shared.err)
		}
		select {
		case shared.tabs <- struct{}{}:
		case <-time.After(3 * time.Minute):
			t.Fatal("waited 3 minutes for a tab: the tests that have one do not give it back")
		}
		shared.mu.Lock()
		var tb *tab
		if n := len(shared.idle); n > 0 {
			tb, shared.idle = shared.idle[n-1], shared.idle[:n-1]
		}
		shared.mu.Unlock()
		if tb == nil {
			var err error
			if tb, err = newTab(); err != nil {
				<-shared.tabs
				t.Fatalf("%s: %v", exe, err)
			}
		}
		tb.mu.Lock()
		tb.owner = b
		tb.mu.Unlock()
		// One deadline for the test's use of the tab: a hung page fails
		// the test, it does not hang it.
		ctx, cancel := context.WithTimeout(tb.ctx, 3*time.Minute)
		b.ctx, b.tab, b.stop = ctx, tb, cancel
		t.Cleanup(b.Close)
		return b
	}
	deadline, cancelDeadline := context.WithTimeout(context.Background(), 3*time.Minute)
	own, stopOwn := launch(deadline, exe)
	b.ctx, b.stop = own, func() {
		stopOwn()
		cancelDeadline()
	}
	t.Cleanup(b.Close)
	if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(Width, Height)); err != nil {
		t.Fatalf("opening a tab in %s: %v", exe, err)
	}
	if err := chromedp.Listen(b.ctx, b.onEvent); err != nil {
		t.Fatalf("listening to the console: %v", err)
	}
	return b
}

// Close ends the test's use of its tab: the page is unloaded (a live
// page's stream closed, its timers stopped) and the tab goes back for
// the next test, or, if it cannot load about:blank, is closed. With a
// Chromium of its own, Close stops it.
func (b *Browser) Close() {
	b.once.Do(func() {
		b.stop()
		tb := b.tab
		if tb == nil {
			return
		}
		tb.mu.Lock()
		tb.owner = nil // what the page logs from now on is no test's
		tb.mu.Unlock()
		ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
		defer cancel()
		defer func() { <-shared.tabs }() // after it is idle (or closed)
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			tb.close()
			return
		}
		shared.mu.Lock()
		shared.idle = append(shared.idle, tb)
		shared.mu.Unlock()
	})
}

func (b *Browser) onEvent(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		var parts []string
		for _, a := range ev.Args {
			switch {
			case a.Description != "":
				parts = append(parts, a.Description)
			case len(a.Value) > 0:
				parts = append(parts, string(a.Value))
			default:
				parts = append(parts, string(a.Type))
			}
		}
		msg = "console." + string(ev.Type) + ": " + strings.Join(parts, " ")
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg = "uncaught: " + d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg += " " + d.Exception.Description
		}
		msg += fmt.Sprintf(" (%s:%d:%d)", d.URL, d.LineNumber+1, d.ColumnNumber+1)
	case *log.EventEntryAdded:
		if ev.Entry.Level != log.EntryLevelError {
			return
		}
		msg = "browser log (" + string(ev.Entry.Source) + "): " + ev.Entry.Text
		if ev.Entry.URL != "" {
			msg += " " + ev.Entry.URL
		}
	default:
		return
	}
	b.mu.Lock()
	b.errors = append(b.errors, msg)
	b.mu.Unlock()
}

// Errors returns the console errors and uncaught exceptions so far.
func (b *Browser) Errors() []string {
	// A round trip: every event sent before its reply has reached onEvent.
	_, _ = chromedp.Run(b.ctx, chromedp.Evaluate[int]("0"))
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.errors)
}

// pollEvery is how often a wait on the page evaluates its condition.
// chromedp's Poll, without an interval, evaluates it in a
// requestAnimationFrame callback, which asks the browser for a frame
// every 16 ms for as long as the wait lasts (the whole of a live run,
// for Open's wait on its end): a timer asks for none.
const pollEvery = 10 * time.Millisecond

// waitJS is a promise that resolves to true once the expression (%[1]s)
// is true, evaluated at once and then every %[2]d ms, or to false after
// %[3]d ms; it is rejected with what the expression throws.
const waitJS = `new Promise((done, fail) => {
  const end = performance.now() + %[3]d;
  const tick = () => {
    let ok;
    try { ok = (%[1]s); } catch (err) { fail(err); return; }
    if (ok) done(true);
    else if (performance.now() > end) done(false);
    else setTimeout(tick, %[2]d);
  };
  tick();
})`

// wait waits until a JavaScript expression is true in the page, for at
// most timeout. It evaluates in the page's current document, as Eval
// does; chromedp's Poll names the document by the execution context it
// last heard of, which, just after a navigation in a tab that had a page
// already, may be the old one's ("Cannot find context with specified
// id").
func (b *Browser) wait(expr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(b.ctx, timeout+10*time.Second) // the page's timers may be what hangs
	defer cancel()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(waitJS, expr, pollEvery.Milliseconds(), timeout.Milliseconds()), chromedp.EvalAwaitPromise))
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("still not true after %v", timeout)
	}
	return nil
}

// Open loads url and waits until the page has its trace (window.traceReady)
// and, when done, until the run has ended (window.traceDone).
func (b *Browser) Open(url string, done bool) error {
	if err := chromedp.Do(b.ctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("loading %s: %w", url, err)
	}
	if err := b.wait("window.traceReady === true || window.traceError !== undefined", 30*time.Second); err != nil {
		return fmt.Errorf("waiting for window.traceReady: %w (console: %q)", err, b.Errors())
	}
	var broken string
	if err := b.Eval("window.traceError || ''", &broken); err != nil {
		return err
	}
	if broken != "" {
		return fmt.Errorf("the page could not read its trace: %s", broken)
	}
	if done {
		if err := b.wait("window.traceDone === true", 2*time.Minute); err != nil {
			return fmt.Errorf("waiting for the end of the run (window.traceDone): %w", err)
		}
	}
	return nil
}

// Poll waits until a JavaScript expression is true.
func (b *Browser) Poll(expr string, timeout time.Duration) error {
	if err := b.wait(expr, timeout); err != nil {
		return fmt.Errorf("waiting for %s: %w", expr, err)
	}
	return nil
}

// Key presses one key (a kb constant or a character) in the page.
func (b *Browser) Key(k string) error {
	return chromedp.Do(b.ctx, chromedp.KeyEvent(k))
}

// Eval evaluates a JavaScript expression and decodes its JSON value into v.
func (b *Browser) Eval(expr string, v any) error {
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]byte]("JSON.stringify("+expr+") ?? \"null\""))
	if err != nil {
		return fmt.Errorf("evaluating %s: %w", expr, err)
	}
	var s string // Evaluate of a string gives its JSON, the JSON of our JSON
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("evaluating %s: %w", expr, err)
	}
	return json.Unmarshal([]byte(s), v)
}

// EvalAsync evaluates an expression whose value is a promise, waits for
// it, and decodes what it resolves to into v.
func (b *Browser) EvalAsync(expr string, v any) error {
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]byte]("("+expr+").then((v) => JSON.stringify(v))", chromedp.EvalAwaitPromise))
	if err != nil {
		return fmt.Errorf("evaluating %s: %w", expr, err)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("evaluating %s: %w", expr, err)
	}
	return json.Unmarshal([]byte(s), v)
}

// Screenshot saves the viewport as a PNG file, once the timeline has come
// to rest.
func (b *Browser) Screenshot(path string) error {
	if err := b.wait("window.tracePage && window.tracePage.settled()", 10*time.Second); err != nil {
		return fmt.Errorf("waiting for the page to settle: %w", err)
	}
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	return os.WriteFile(path, png, 0o644)
}

// State is what the page shows at its cursor, read from the DOM.
type State struct {
	Title  string            `json:"title"`
	Seq    string            `json:"seq"`
	Lanes  map[string]int    `json:"lanes"`
	Order  []string          `json:"order"`
	Steps  []string          `json:"steps"`
	Store  []string          `json:"store"`
	Output int               `json:"output"`
	Extra  map[string]string `json:"extra,omitempty"`
}

const stateJS = `(() => {
  const lanes = {}, order = [];
  for (const el of document.querySelectorAll('[data-lane]')) { lanes[el.dataset.lane] = +el.dataset.count; order.push(el.dataset.lane); }
  return {
    title: document.getElementById('step-title').textContent,
    seq: document.getElementById('cursor').dataset.seq,
    lanes, order,
    steps: Array.from(document.querySelectorAll('#steps li'), (li) => li.textContent),
    store: Array.from(document.querySelectorAll('#store li'), (li) => li.textContent),
    output: document.getElementById('console').textContent.split('\n').filter(Boolean).length,
  };
})()`

// State reads what the page shows now.
func (b *Browser) State() (State, error) {
	var s State
	err := b.Eval(stateJS, &s)
	return s, err
}

// Check loads pageURL in headless Chromium at 1280×720, waits for the trace
// (and, for a live page, for the end of the run), steps through it with the
// presenter's keys (PageDown through every step, then End), and checks the
// DOM against want: the events per lane at the end, the step headings (each
// shown in turn, and all listed), the store at the end. Any console error or
// uncaught exception fails the test. If screenshot is not "", the page is
// saved there as a 1280×720 PNG. Check skips the test where no Chromium can
// be found.
func Check(t *testing.T, pageURL string, want Expect, screenshot string) {
	t.Helper()
	b := Start(t)
	defer b.Close() // the next Check, in this test or another, has the tab
	if err := b.Open(pageURL, true); err != nil {
		t.Fatal(err)
	}
	// Step through: PageDown until the cursor stops moving; the title must
	// show every step heading, in order.
	var seen []string
	last := "\x00"
	for i := 0; i <= len(want.Steps)+2; i++ {
		s, err := b.State()
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) == 0 || seen[len(seen)-1] != s.Title {
			seen = append(seen, s.Title)
		}
		if s.Seq == last {
			break
		}
		last = s.Seq
		if err := b.Key(kb.PageDown); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range want.Steps {
		if !slices.Contains(seen, w) {
			t.Errorf("stepping with PageDown never showed the step %q; titles shown: %q", w, seen)
		}
	}
	if err := b.Key(kb.End); err != nil {
		t.Fatal(err)
	}
	s, err := b.State()
	if err != nil {
		t.Fatal(err)
	}
	CompareEnd(t, s, want)
	if screenshot != "" {
		if want.ScreenshotSeq > 0 {
			if err := b.Eval(fmt.Sprintf("window.tracePage.seekSeq(%d)", want.ScreenshotSeq), new(any)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Screenshot(screenshot); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range b.Errors() {
		t.Errorf("the page logged an error: %s", e)
	}
}

// CompareEnd checks the state at the end of the run against want.
func CompareEnd(t testing.TB, s State, want Expect) {
	t.Helper()
	if want.Lanes != nil && !maps.Equal(s.Lanes, want.Lanes) {
		t.Errorf("events per lane at the end:\n got %v\nwant %v", s.Lanes, want.Lanes)
	}
	if !slices.Equal(s.Steps, want.Steps) && !(len(s.Steps) == 0 && len(want.Steps) == 0) {
		t.Errorf("#steps lists\n %q\nwant\n %q", s.Steps, want.Steps)
	}
	wantStore := StoreLines(want.Store)
	if want.Store != nil && !slices.Equal(s.Store, wantStore) {
		t.Errorf("#store at the end:\n got %q\nwant %q", s.Store, wantStore)
	}
}

// StoreLines is the store as #store lists it: "key rv", sorted by key.
func StoreLines(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+" "+m[k])
	}
	return out
}

// Trace is the part of the trace document that Expect is computed from.
type Trace struct {
	Lanes []string `json:"lanes"`
	Steps []struct {
		Seq   int    `json:"seq"`
		Title string `json:"title"`
	} `json:"steps"`
	Events []struct {
		Seq  int      `json:"seq"`
		Lane int      `json:"lane"`
		Verb string   `json:"verb"`
		Text string   `json:"text"`
		Key  string   `json:"key"`
		RV   string   `json:"rv"`
		Keys []string `json:"keys"`
		RVs  []string `json:"rvs"`
	} `json:"events"`
}

// ExpectFrom computes, from a trace document, what the page must show at
// the end: events per lane, the step titles, and the store replayed from the
// store lane (Add and Update set key → rv, Delete removes the key, Replace
// leaves exactly its keys).
func ExpectFrom(traceJSON []byte) (Expect, error) {
	var tr Trace
	if err := json.Unmarshal(traceJSON, &tr); err != nil {
		return Expect{}, fmt.Errorf("reading the trace: %w", err)
	}
	want := Expect{Lanes: map[string]int{}, Store: map[string]string{}}
	storeLane := -1
	for i, l := range tr.Lanes {
		want.Lanes[l] = 0
		if storeLane < 0 && (strings.Contains(strings.ToLower(l), "store") || strings.Contains(strings.ToLower(l), "indexer")) {
			storeLane = i
		}
	}
	for _, s := range tr.Steps {
		want.Steps = append(want.Steps, s.Title)
	}
	for _, e := range tr.Events {
		if e.Lane < 0 || e.Lane >= len(tr.Lanes) {
			return Expect{}, fmt.Errorf("event seq %d: lane %d of %d", e.Seq, e.Lane, len(tr.Lanes))
		}
		want.Lanes[tr.Lanes[e.Lane]]++
		if e.Lane != storeLane {
			continue
		}
		// As the page: only what names its keys changes the store (10's
		// store lane, from the metrics provider, names none).
		if e.Verb == "Replace" && e.Keys == nil || e.Verb != "Replace" && e.Key == "" {
			continue
		}
		switch e.Verb {
		case "Add", "Update":
			want.Store[e.Key] = e.RV
		case "Delete":
			delete(want.Store, e.Key)
		case "Replace":
			next := map[string]string{}
			for i, k := range e.Keys {
				switch {
				case i < len(e.RVs):
					next[k] = e.RVs[i]
				default:
					next[k] = want.Store[k]
				}
			}
			want.Store = next
		}
	}
	return want, nil
}
