package reliability

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/informer-walkthrough/informer-walkthrough/check/browser"
	"github.com/informer-walkthrough/informer-walkthrough/check/golden"
	"github.com/informer-walkthrough/informer-walkthrough/internal/source"
	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// instrumented turns on the checks that build the chapters with client-go
// instrumented for coverage, as --source does (TestSource,
// TestSourceTrace). That build recompiles client-go's tools/cache and
// rest and everything that imports them: about a minute of CPU once, and
// 100 s on a fresh clone, which is why go test ./... leaves it out and
// .ci/run turns it on (as Kubernetes runs its verify scripts outside go
// test). With the build cached, the two tests take about 15 s of CPU.
var instrumented = flag.Bool("source.instrumented", false,
	"build the chapters with client-go instrumented and check --source (TestSource, TestSourceTrace)")

// skipUninstrumented skips a test that needs the instrumented build
// unless -source.instrumented asks for it.
func skipUninstrumented(t *testing.T) {
	t.Helper()
	if !*instrumented {
		t.Skip("needs the instrumented build: go test ./check/reliability -run Source -source.instrumented (.ci/run does)")
	}
}

// coverBuild builds every chapter once more, into one binary as build
// does, but with client-go instrumented as --source builds a chapter
// (source.Packages; see build).
var coverBuild = sync.OnceValues(func() ([]chapter, error) {
	dir := filepath.Join(binDir, "cover")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	return build(dir, source.Packages)
})

// TestSource runs every chapter with --source, built with coverage: the
// chapter's own lines are its golden file's, unchanged, and the
// functions each step entered are those NN/testdata/source.golden pins,
// but for what depends on timing (sourceVaries). How often each was
// entered is not pinned: most counts depend on how the watch events were
// batched and on which goroutine ran first.
func TestSource(t *testing.T) {
	skipUninstrumented(t)
	// Parallel: the other tests run while it builds and runs the
	// chapters. It runs after the serial tests, whose leak checks count
	// every goroutine of the process (its runs' output copiers too).
	t.Parallel()
	<-built // one build at a time: the machine has two cores
	start := time.Now()
	chs, err := coverBuild()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the instrumented build took %v", time.Since(start).Round(time.Second))
	for _, ch := range chs {
		t.Run(ch.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 4*limit)
			defer cancel()
			cmd, stdout, stderr := ch.command(ctx, env(t, append(goEnv(t), "GOCOVERDIR="+t.TempDir())...), "--source")
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("still running after %v; stacks:\n%s", 4*limit, stderr)
			}
			// Some chapters log on stderr (07's controller, as
			// sample-controller does); --source never does, but to fail.
			if err != nil || strings.Contains(stderr.String(), "--source") {
				t.Fatalf("%v; stderr:\n%s", err, stderr)
			}
			own, sets := splitSource(stdout.String())
			want, err := os.ReadFile(filepath.Join(root, ch.name, "testdata", ch.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			own = regexp.MustCompile(`github.com/\S*/chapters/ch\w+\.`).ReplaceAllString(own, "main.")
			if diff := cmp.Diff(string(want), own); diff != "" {
				t.Errorf("with --source the chapter's own lines differ from its golden file (-want +got):\n%s", diff)
			}
			got := "# go run ./" + ch.name + " --source: the functions each step entered, by part\n" +
				"# (TestSource in check/reliability; their counts are not pinned)\n" +
				sourceSets(ch.name, sets)
			path := filepath.Join(root, ch.name, "testdata", "source.golden")
			if golden.Updating() {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantSets, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (UPDATE_GOLDEN=1 go test ./check/reliability -run TestSource writes it)", err)
			}
			if diff := cmp.Diff(string(wantSets), got); diff != "" {
				t.Errorf("the functions the steps entered differ from %s (-want +got):\n%s", path, diff)
			}
		})
	}
}

// goEnv is where the go command keeps modules and builds, as this
// process's environment says: env gives a chapter a HOME of its own, and
// --source reads client-go's source in the module cache and runs go tool
// covdata, which must not be built again for every run.
var goEnv = func(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := lines(string(out))
	if len(v) != 3 {
		t.Fatalf("go env: %q", out)
	}
	return []string{"GOMODCACHE=" + v[0], "GOCACHE=" + v[1], "GOPATH=" + v[2]}
}

// entered is a function a step entered, as --source printed it.
type entered struct {
	part, name string
	count      string // "3"
}

// stepSet is what one step entered: the step is its heading, or "" for
// what ran before the first heading.
type stepSet struct {
	step  string
	funcs []entered
}

// sourceHeading and sourceLine are --source's lines (source.Format).
var (
	stepHeading   = regexp.MustCompile(`^(Step \d+[a-z]?\.|Setup\.)`)
	sourceHeading = regexp.MustCompile(`^  --source: entered \d+ functions? of `)
	sourceLine    = regexp.MustCompile(`^    (\S.*?)?\s+(\S+)\s+×(\d+)\s+\S+:\d+$`)
)

// splitSource splits a --source run's output into the chapter's own
// lines and the steps' reports.
func splitSource(out string) (own string, sets []stepSet) {
	var b strings.Builder
	step, part, in := "", "", false
	for _, l := range lines(out) {
		switch {
		case sourceHeading.MatchString(l):
			sets = append(sets, stepSet{step: step})
			in, part = true, ""
			continue
		case in && strings.HasPrefix(l, "    "):
			m := sourceLine.FindStringSubmatch(l)
			if m == nil {
				sets[len(sets)-1].funcs = append(sets[len(sets)-1].funcs, entered{name: "unparsed: " + l})
				continue
			}
			if m[1] != "" {
				part = m[1]
			}
			sets[len(sets)-1].funcs = append(sets[len(sets)-1].funcs, entered{part: part, name: m[2], count: m[3]})
			continue
		}
		in = false
		if stepHeading.MatchString(l) {
			step = l
		}
		b.WriteString(l + "\n")
	}
	return b.String(), sets
}

// sourceSets is what source.golden pins of a run's reports: per step,
// the functions by part, but for sourceVaries.
func sourceSets(chapter string, sets []stepSet) string {
	var b strings.Builder
	width := 0
	for _, s := range sets {
		for _, f := range s.funcs {
			width = max(width, len(f.part))
		}
	}
	for _, s := range sets {
		step := s.step
		if step == "" {
			step = "(before the first step)"
		}
		b.WriteString(step + "\n")
		last := ""
		for _, f := range s.funcs {
			if varies(chapter, s.step, f.name) {
				continue
			}
			part := ""
			if f.part != last {
				part, last = f.part, f.part
			}
			fmt.Fprintf(&b, "  %-*s  %s\n", width, part, f.name)
		}
	}
	return b.String()
}

// vary is a function whose running at all in a step depends on timing:
// which goroutine ran first, or a timer.
type vary struct {
	chapter string // "" for every chapter
	step    string // a heading's prefix ("Step 3."); "" for every step
	name    string // the function, as --source names it
	why     string
	unless  string // "chapter Step N." where it does not vary: there it is pinned
}

// sourceVaries is every function whose place in source.golden depends
// on timing, and why; nothing else.
var sourceVaries = []vary{
	{"", "", "(*Typed[...]).updateUnfinishedWorkLoop",
		"a workqueue's metrics goroutine (util/workqueue/queue.go#L178) ticks every 500 ms " +
			"(queue.go#L184): whether a tick fell in the step", ""},
	{"", "", "(*Typed[...]).updateUnfinishedWork", "the same ticker's work", ""},
	{"", "", "(*defaultQueueMetrics[...]).updateUnfinishedWork", "the same ticker's work", ""},
	{"", "", "(*Reflector).list.func1.1",
		"the deferred function of the goroutine a list runs in (tools/cache/reflector.go#L686): " +
			"it runs as that goroutine ends, after it has handed the list over, so possibly " +
			"after the step has gone on to its next heading", ""},
	{"07-controller", "", "(*Typed[...]).ShuttingDown", workerAgain, ""},
	{"07-controller", "", "(waitForPriorityQueue[...]).Len", workerAgain, ""},
	{"10-lifecycle", "", "(waitForPriorityQueue[...]).Len", waitingLoop, ""},
	{"10-lifecycle", "", "(*Typed[...]).ShuttingDown", waitingLoop, ""},
	{"07-controller", "Step 1.", "(*cache).Add",
		"the step's two creates arrive back to back: popped one by one they go to the store " +
			"through Add, popped as one batch through a transaction (see batched)", ""},
	{"07-controller", "Step 1.", "(*threadSafeMap).Add", "(*cache).Add's", ""},
	{"07-controller", "Step 1.", "(*threadSafeMap).Update", "(*cache).Add's", ""},
	// Seen in 03's, 05's and 09's steps: any step that ends once its
	// informer has synced.
	{"", "", "handleWatch", watchStart, ""},
	{"", "", "NewRetryWithDeadline", watchStart, ""},
	{"", "", "(*noopTicker).C", watchStart, ""},
	{"", "", "(*retryWithDeadlineImpl).After", watchStart, ""},
	{"03-reflector", "Step 5.", "(*initialEventsEndBookmarkTicker).observeLastEventTimeStamp",
		"called for each event the resumed watch hands over (tools/cache/reflector.go's " +
			"handleAnyWatch): the step may end before the reflector has handled one", ""},
	{"11-controller-runtime", "Step 5.", "isExpiredError", stoppedBefore, ""},
	{"11-controller-runtime", "Step 5.", "(*retryWithDeadlineImpl).reset", stoppedBefore, ""},
	{"11-controller-runtime", "Step 5.", "(*retryWithDeadlineImpl).ShouldRetry", stoppedBefore, ""},
	{"01-watch", "Step 4.", "(*Decoder).Decode",
		"the watch's decoding goroutine (apimachinery's StreamWatcher.receive) makes its " +
			"last Decode, which returns the end of the stream, after the step has stopped " +
			"the watch: before or after the next heading, whichever ran first", ""},
	{"03-reflector", "Step 1.", "(*Reflector).resyncChan", resyncStart, ""},
	{"03-reflector", "Step 1.", "(*Reflector).startResync", resyncStart, ""},
	{"03-reflector", "Step 1.", "(*Reflector).watchWithResync.func2", resyncStart, ""},
	{"03-reflector", "Step 7.", "(*Decoder).Decode",
		"step 6 ends once the relist's BOOKMARK is handed over (apimachinery " +
			"pkg/watch/streamwatcher.go#L139); the watch's decoding goroutine then loops " +
			"to its next Decode (streamwatcher.go#L114), which waits on a stream that sends " +
			"nothing more: entered before step 7's heading or after, whichever ran first " +
			"(step 7 makes no request)", ""},
	{"03-reflector", "Step 3.", "isDup",
		"dedupDeltas compares deltas only when an object has two queued at once " +
			"(client-go tools/cache/delta_fifo.go#L445): whether the informer popped the " +
			"first before the second arrived", ""},
	{"03-reflector", "Step 3.", "isDeletionDup", "isDup's, the same reason", ""},
	{"11-controller-runtime", "Step 4.", "(ResourceEventHandlerFuncs).OnUpdate",
		"the step's Update goes to the server and the step does not wait for its watch " +
			"event to reach the cache (step 5 is about that): it arrives before the step's " +
			"end or after", ""},
	{"13-generated", "Step 7.", "(*cache).Update",
		"the step's writes on the fake clientset reach the informer through the fake's " +
			"watch, which the step does not wait for before it shuts the factory down", ""},
	{"13-generated", "Step 7.", "(*threadSafeMap).Update", "(*cache).Update's", ""},
	{"13-generated", "Step 7.", "(*threadSafeMap).updateLocked", "(*cache).Update's", ""},
	{"13-generated", "Step 7.", "rvFromObject", "(*cache).Update's", ""},
	{"13-generated", "Step 7.", "(*sharedIndexInformer).OnUpdate", "(*cache).Update's", ""},
	// A RealFIFO pops every delta queued, up to its batch size, at once
	// (tools/cache/the_real_fifo.go#L510): one queued delta is
	// processed alone, two or more in a batch, through a transaction
	// on the store. 05's step 8 queues its batches on purpose.
	{"", "", "(*RealFIFO).PopBatch.func4", batched, "05-informer Step 8."},
	{"", "", "(*sharedIndexInformer).RunWithContext.func1.2", batched, "05-informer Step 8."},
	{"", "", "(*sharedIndexInformer).handleBatchDeltas", batched, "05-informer Step 8."},
	{"", "", "processDeltasInBatch", batched, "05-informer Step 8."},
	{"", "", "processDeltasInBatch.func1", batched, "05-informer Step 8."},
	{"", "", "processDeltasInBatch.func2", batched, "05-informer Step 8."},
	{"", "", "(*cache).Transaction", batched, "05-informer Step 8."},
	{"", "", "(*threadSafeMap).Transaction", batched, "05-informer Step 8."},
	{"", "", "(*threadSafeMap).addLocked", batched, "05-informer Step 8."},
}

// batched is why a RealFIFO's batch functions may or may not run.
const batched = "whether two watch events were queued before the informer popped the first"

// stoppedBefore is why a stopped reflector's last steps may fall in the
// next step.
const stoppedBefore = "step 4's cache is stopped just before step 5's heading (main.go, " +
	"readers.stop): its reflectors' watch loops end (tools/cache/reflector.go#L643) when " +
	"they notice, before or after the heading"

// workerAgain is why a worker's next Get may fall in the next step.
const workerAgain = "a worker goes back to the queue's Get after each sync, and that call " +
	"may come after the step's last line"

// waitingLoop is why the first steps of a delaying queue's goroutine
// may fall in a later step than the one that made the queue.
const waitingLoop = "step 2 makes a rate-limited queue, whose delaying queue starts its " +
	"waiting loop in a goroutine (util/workqueue/delaying_queue.go#L157); the loop's " +
	"heap.Init calls Len (delaying_queue.go#L286) and its first pass ShuttingDown " +
	"(delaying_queue.go#L291). Nothing the step can wait for says that goroutine has run: " +
	"under load it first ran after step 3's heading, once the queue was shut down"

// watchStart is why the start of a reflector's watch may fall in the
// next step.
const watchStart = "the reflector goes on to watch after the list (or the watch-list's " +
	"initial events), in its own goroutine; the step waits for the listed objects only"

// resyncStart is why the start of a reflector's resync loop may fall in
// the next step.
const resyncStart = "the reflector starts its resync loop in a goroutine beside the watch " +
	"(tools/cache/reflector.go#L550), which may first run after the step's last line"

func varies(chapter, step, name string) bool {
	for _, v := range sourceVaries {
		if v.unless != "" && strings.HasPrefix(chapter+" "+step, v.unless) {
			continue
		}
		if (v.chapter == "" || v.chapter == chapter) && strings.HasPrefix(step, v.step) && v.name == name {
			return true
		}
	}
	return false
}

// TestSourceBadInput: --source where it cannot work is one line on
// stderr and exit status 1: no Go toolchain to build with, a binary that
// --source built and that has no counters all the same, and a build
// that fails (these chapters' binary holds a package that exists only in
// build's overlay, so go run cannot build it again). The shared main
// meets each before the chapter's code runs (runner.ParseWith): each
// runs on one chapter of each shared main (takeTurns).
func TestSourceBadInput(t *testing.T) {
	t.Parallel()
	chs := builtChapters(t)
	cases := []struct {
		name string
		env  []string
		want string
	}{
		{"no go on PATH", []string{"PATH=" + t.TempDir()}, "needs the Go toolchain on PATH"},
		{"built without coverage", []string{source.EnvChild + "=1"}, "built without coverage"},
		{"the build fails", nil, "building with coverage failed: "},
	}
	for i, tc := range cases {
		run := takeTurns(chs, i, func(chapter) bool { return true })
		if tc.name == "the build fails" {
			// A go command per shared main would teach nothing more.
			run = slices.DeleteFunc(slices.Clone(chs), func(ch chapter) bool { return ch.name != "04-indexer" })
		}
		for _, ch := range run {
			t.Run(tc.name+"/"+ch.name, func(t *testing.T) {
				r := ch.run(t, env(t, tc.env...), "--source")
				l := lines(r.stderr)
				if r.code != 1 || len(l) != 1 || !strings.HasPrefix(l[0], ch.name+": --source") ||
					!strings.Contains(l[0], tc.want) || r.stdout != "" {
					t.Errorf("exit status %d, stdout %q, stderr %q; want 1 and one line that says %q",
						r.code, r.stdout, r.stderr, tc.want)
				}
			})
		}
	}
}

// TestSourceTrace: with --source and --trace, the trace holds each
// step's report for the page (trace.RecordSource), at the index of the
// step that ran it, with every file's text, and each function's line in
// that text is its declaration's. Then the page, in Chromium, shows it
// (browser.CheckSource): each step's source pane and the lanes the
// chapter has no tap on, which say what was counted there. The chapters
// are one of each kind of pipeline (sourcePages); one of them runs with
// --view too, and its live page is checked as well as its file (each
// file's code on one of the two: they draw it from the same input).
func TestSourceTrace(t *testing.T) {
	skipUninstrumented(t)
	// Parallel: the instrumented build is made once (coverBuild), by
	// whichever of TestSource and this test asks first, after the plain
	// build (built); the other waits for it.
	t.Parallel()
	<-built
	chs, err := coverBuild()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range chs {
		if !slices.Contains(sourcePages, ch.name) {
			continue
		}
		t.Run(ch.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "t.html")
			ctx, cancel := context.WithTimeout(t.Context(), 4*limit)
			defer cancel()
			e := env(t, append(goEnv(t), "GOCOVERDIR="+t.TempDir())...)
			var stdout *bytes.Buffer
			var b *browser.Browser // the live page's, with --view
			if ch.name == sourceLive {
				stdout, b = runLive(t, ctx, cancel, ch, e, "--source", "--trace", file)
			} else {
				cmd, out, stderr := ch.command(ctx, e, "--source", "--trace", file)
				if err := cmd.Run(); err != nil {
					t.Fatalf("%v; stderr:\n%s", err, stderr)
				}
				stdout = out
			}
			page, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := trace.ReadHTML(page)
			if err != nil {
				t.Fatal(err)
			}
			// The step each report of the output belongs to: the index
			// of the heading before it, -1 before the first.
			var want []int
			step := -1
			for _, l := range lines(stdout.String()) {
				switch {
				case stepHeading.MatchString(l):
					step++
				case sourceHeading.MatchString(l):
					want = append(want, step)
				}
			}
			var got []int
			for _, s := range tr.Sources {
				got = append(got, s.Step)
				for _, f := range s.Files {
					text, ok := tr.Texts[trace.SourceKey(f)]
					if !ok {
						t.Errorf("step %d: no text for %s", s.Step, trace.SourceKey(f))
						continue
					}
					src := strings.Split(text, "\n")
					for _, fn := range f.Funcs {
						if fn.Line < 1 || fn.Line > len(src) || !strings.Contains(src[fn.Line-1], "func") {
							t.Errorf("%s: %s at line %d, which declares no function", f.Path, fn.Name, fn.Line)
						}
					}
				}
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("the trace's source steps are %v, the output's reports belong to steps %v", got, want)
			}
			if len(tr.Steps) != step+1 {
				t.Errorf("the trace has %d steps, the output %d headings", len(tr.Steps), step+1)
			}
			if browser.Find() == "" {
				t.Log("no Chromium found: the source pane is not checked in a browser (apt-get install chromium, or set $CHROME)")
				return
			}
			// The file a --view run wrote holds the trace its live page
			// had: its files' code, drawn from the same input, is shown
			// in turn on one of the two pages (see browser.Shown).
			shown := browser.Shown{}
			if b != nil {
				t.Run("live", func(t *testing.T) { browser.CheckSource(t, b, tr, shown) })
			} else {
				b = browser.Start(t)
			}
			t.Run("file", func(t *testing.T) {
				if err := b.Open("file://"+file, true); err != nil {
					t.Fatal(err)
				}
				browser.CheckSource(t, b, tr, shown)
			})
			for _, e := range b.Errors() {
				t.Errorf("the page logged an error: %s", e)
			}
		})
	}
}

// sourcePages are the chapters whose --source pages TestSourceTrace
// checks in Chromium: 03's reflector, FIFO and store assembled by hand
// (taps on each), 05's informer (client-go builds them: its lanes are
// filled from the counters), and 11's controller-runtime cache (another
// module's files and links). Each page check costs seconds of the
// suite's two cores, so the other chapters' pages are not opened; their
// steps' sources are checked by TestSource.
var sourcePages = []string{"03-reflector", "05-informer", "11-controller-runtime"}

// sourceLive is the one of sourcePages run with --view as well: its
// live page is checked, then the file the same run wrote.
const sourceLive = "05-informer"

// runLive runs a chapter with --view and args, opens its page in
// Chromium, which starts the chapter, and returns once the chapter has
// ended and the page has the whole run: what the chapter printed, and
// the tab, still showing the live page.
func runLive(t *testing.T, ctx context.Context, cancel context.CancelFunc, ch chapter, env []string, args ...string) (*bytes.Buffer, *browser.Browser) {
	t.Helper()
	stdout, pipe, wait := startPiped(t, ctx, cancel, ch, env, nil, append([]string{"--view"}, args...)...)
	var stderr bytes.Buffer
	errs := bufio.NewScanner(pipe)
	if !errs.Scan() {
		t.Fatal("no line on stderr")
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(errs.Text())
	if url == "" {
		t.Fatalf("first stderr line: %q", errs.Text())
	}
	done := make(chan struct{})
	go func() { // the rest of stderr, for a failure
		defer close(done)
		for errs.Scan() {
			stderr.WriteString(errs.Text() + "\n")
		}
	}()
	var b *browser.Browser
	if browser.Find() != "" {
		b = browser.Start(t)
		if err := b.Open(url, true); err != nil {
			t.Fatal(err)
		}
	} else { // the chapter starts when a page follows its stream
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	<-done
	if err := wait(); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, &stderr)
	}
	return stdout, b
}
