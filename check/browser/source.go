package browser

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/informer-walkthrough/informer-walkthrough/internal/trace"
)

// The source pane (issue 34): what a run with --source recorded of each
// step, checked on the page against the trace.

// repos are the repositories of the modules whose files a trace's
// sources may name: a function's link is its line in the repository at
// the file's version. The page's sourceURL must agree.
var repos = map[string]string{
	"k8s.io/client-go":               "https://github.com/kubernetes/client-go",
	"k8s.io/apimachinery":            "https://github.com/kubernetes/apimachinery",
	"k8s.io/api":                     "https://github.com/kubernetes/api",
	"sigs.k8s.io/controller-runtime": "https://github.com/kubernetes-sigs/controller-runtime",
}

// paneFile is a file of a step as the pane must show it.
type paneFile struct {
	Key, Path, Part string
	Count           int
	Funcs           []paneFunc
	Ran             map[int]int // line → count
}

type paneFunc struct {
	Name, Href string
	Line       int
	Count      string
}

// wantSource is what the pane must show for step st: the step's files (all
// its source messages added up: by file, each function's counts by name
// and line, each block's by its lines), by path; a line ran when a block
// with a count covers it, with the largest such count. lanes is, per lane
// name, the sum of its part's functions' counts.
func wantSource(tr trace.Trace, st int) (files []paneFile, lanes map[string]int) {
	type acc struct {
		f      trace.SourceFile
		funcs  map[trace.SourceFunc]int // Count zeroed: the key
		blocks map[trace.SourceBlock]int
	}
	byKey := map[string]*acc{}
	for _, s := range tr.Sources {
		if s.Step != st {
			continue
		}
		for _, f := range s.Files {
			k := trace.SourceKey(f)
			a := byKey[k]
			if a == nil {
				a = &acc{f: f, funcs: map[trace.SourceFunc]int{}, blocks: map[trace.SourceBlock]int{}}
				byKey[k] = a
			}
			for _, fn := range f.Funcs {
				a.funcs[trace.SourceFunc{Name: fn.Name, Line: fn.Line}] += fn.Count
			}
			for _, b := range f.Blocks {
				a.blocks[trace.SourceBlock{Start: b.Start, End: b.End}] += b.Count
			}
		}
	}
	lanes = map[string]int{}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		a := byKey[k]
		pf := paneFile{Key: k, Path: a.f.Path, Part: a.f.Part, Ran: map[int]int{}}
		fns := slices.SortedFunc(maps.Keys(a.funcs), func(x, y trace.SourceFunc) int {
			return cmp.Or(cmp.Compare(x.Line, y.Line), cmp.Compare(x.Name, y.Name))
		})
		for _, fn := range fns {
			n := a.funcs[fn]
			pf.Count += n
			href := ""
			if repo := repos[a.f.Module]; repo != "" {
				href = fmt.Sprintf("%s/blob/%s/%s#L%d", repo, a.f.Version, a.f.Path, fn.Line)
			}
			pf.Funcs = append(pf.Funcs, paneFunc{Name: fn.Name, Line: fn.Line, Count: fmt.Sprintf("×%d", n), Href: href})
		}
		for b, n := range a.blocks {
			for l := b.Start; l <= b.End && n > 0; l++ {
				pf.Ran[l] = max(pf.Ran[l], n)
			}
		}
		lanes[a.f.Part] += pf.Count
		files = append(files, pf)
	}
	slices.SortStableFunc(files, func(x, y paneFile) int { return cmp.Compare(x.Path, y.Path) })
	return files, lanes
}

// The pane as the page shows it.
type shownPane struct {
	Head  string
	Files []paneEntry
	Funcs []struct {
		Name, Href, Count string
		Line              int
	}
	Ran   [][2]string // line, "×count"
	Lines int
	// The text of the functions' lines, as the code shows them.
	Texts map[string]string
	Title string
}

// paneEntry is a file as the pane lists it.
type paneEntry struct {
	Key, Path, Part, N string
	Sel                bool
}

// paneJS is a function that reads the pane as the page shows it.
const paneJS = `() => {
  const code = document.getElementById('src-code');
  const text = (d) => Array.from(d.childNodes).slice(2).map((n) => n.textContent).join('');
  const texts = {};
  for (const li of document.querySelectorAll('#src-funcs > li')) { const d = code.children[+li.dataset.line - 1]; texts[li.dataset.line] = d ? text(d) : null; }
  return {
    head: document.getElementById('src-head').textContent,
    files: Array.from(document.querySelectorAll('#src-files > li'), (li) => ({Key: li.dataset.key, Path: li.dataset.path, Part: li.dataset.part, N: li.querySelector('.n').textContent, Sel: li.classList.contains('sel')})),
    funcs: Array.from(document.querySelectorAll('#src-funcs > li'), (li) => ({Name: li.querySelector('a, .fn').textContent, Href: li.querySelector('a')?.href ?? '', Count: li.querySelector('.fc').textContent, Line: +li.dataset.line})),
    ran: Array.from(code.querySelectorAll('.ln.ran'), (d) => [d.dataset.line, d.querySelector('.ct').textContent]),
    lines: code.hidden ? 0 : code.children.length,
    texts,
    title: document.getElementById('src-title').textContent,
  };
}`

// notesJS is a function that reads what each untapped lane says, on the
// timeline (drawn now) and in its title, and what the store panel says.
const notesJS = `() => {
  tracePage.draw();
  const tl = {}, titles = {};
  for (const t of document.querySelectorAll('#tl text[data-note-lane]')) tl[t.dataset.noteLane] = t.textContent;
  for (const el of document.querySelectorAll('#lanes .lane.untapped')) titles[el.dataset.lane] = el.title;
  const note = document.getElementById('store-note');
  return {tl, titles, store: note.hidden ? '' : note.textContent};
}`

// stopJS is what CheckSource does at one position, in one evaluation
// (a round trip to the browser costs more than what it asks for): with
// the pane closed, move to the seq and read the notes; open the pane and
// read it as it opens; then show each of the files (keys) in turn and read the pane each time. renderSource draws a file
// synchronously, layout included (srcJump reads the code's height), so
// each file is drawn as a click on it draws it; only the paint of the
// files shown in between is left out, which nothing here reads.
const stopJS = `(seq, keys) => {
  const pane = ` + paneJS + `, notes = ` + notesJS + `;
  tracePage.source(false); tracePage.seekSeq(seq);
  const out = {notes: notes(), open: tracePage.source(true)};
  if (!out.open) return out;
  out.pane = pane();
  out.files = keys.map((k) => (tracePage.sourceFile(k), pane()));
  return out;
}`

// CheckSource checks, on a page that has opened tr (see Browser.Open,
// with done), what the page shows of the trace's sources (--source): for
// each step (and before the first heading, if anything is there), at its
// first and its last position, what each lane with no event in the run
// says on the timeline and in its title ("ran ×N, counted, not
// sequenced", N the sum of the counts of the step's functions whose part
// is the lane), what the store panel says when the store lane has no
// event (what the step counted of the store's code: wantStoreNote), and,
// with the source pane open, the step's files (all its source messages
// added up, by path) with their counts and parts, and the file the pane
// opens on; then, at the step's first position, each file in turn: its
// count and part, its functions with their counts and links to their
// lines at the module's tag, its text line by line, and the lines that
// ran with their counts (a line in blocks with counts, the largest). A
// trace without sources must keep saying "no tap in this chapter".
//
// A file is shown in turn once a step, not at both positions: the pane is
// drawn from the step of the cursor's position alone (the page's
// renderSource keys it on the step, the file and the data), so at the
// last position it would draw the same files from the same data; there
// the list and the file the pane opens on are checked, which is what
// would differ if the page took the last position for another step. Nor
// is a file shown again in a later step whose source messages hold it
// with the very same counters as an earlier step's (a chapter's steps
// often run the same code the same number of times): the page would draw
// it from the same input with the same code; its entry in the list,
// count and all, is still checked at every position.
//
// shown holds the files shown in turn, each with the input it was drawn
// from; nil is an empty one. A page of the same trace checked with the
// same shown (the --trace file that a --view run wrote, after its live
// page) shows in turn only files drawn from an input the other page did
// not have: the page keeps a trace's sources and texts as they come,
// from the stream or from the file, and draws from them alone.
func CheckSource(t testing.TB, b *Browser, tr trace.Trace, shown Shown) {
	t.Helper()
	if shown == nil {
		shown = Shown{}
	}
	tapped := make([]bool, len(tr.Lanes))
	for _, e := range tr.Events {
		if int(e.Lane) >= 0 && int(e.Lane) < len(tapped) {
			tapped[e.Lane] = true
		}
	}
	type at struct {
		step, first, last int
		title             string
	}
	var stops []at
	for st := -1; st < len(tr.Steps); st++ {
		s := at{step: st, first: -1, title: "before the first step"}
		if st >= 0 {
			s.first, s.last, s.title = tr.Steps[st].Seq, tr.Steps[st].Seq, tr.Steps[st].Title
		}
		for _, e := range tr.Events {
			if e.Step == st {
				if s.first < 0 {
					s.first = e.Seq
				}
				s.last = e.Seq
			}
		}
		if s.first >= 0 {
			stops = append(stops, s)
		}
	}
	for _, s := range stops {
		files, lanes := wantSource(tr, s.step)
		var keys []string
		var draw []paneFile // the files to show in turn, at the first position
		for _, f := range files {
			keys = append(keys, f.Key)
			if in := stepInput(tr, s.step, f.Key); !shown[in] {
				shown[in] = true
				draw = append(draw, f)
			}
		}
		for i, seq := range []int{s.first, s.last} {
			where := fmt.Sprintf("step %d (%q) at seq %d", s.step, s.title, seq)
			walk := []string{}
			if i == 0 {
				for _, f := range draw {
					walk = append(walk, f.Key)
				}
			}
			var got struct {
				Notes struct {
					TL, Titles map[string]string
					Store      string
				}
				Open  bool
				Pane  shownPane
				Files []shownPane
			}
			if err := b.Eval("("+stopJS+")("+strconv.Itoa(seq)+", "+jsonStrings(walk)+")", &got); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for l, name := range tr.Lanes {
				switch {
				case tapped[l]:
				case len(tr.Sources) == 0:
					want[name] = "no tap in this chapter"
				case lanes[name] > 0:
					want[name] = fmt.Sprintf("ran ×%d, counted, not sequenced", lanes[name])
				default:
					want[name] = "no tap; nothing counted in this step"
				}
			}
			wantTL := want
			if !slices.Contains(tapped, true) {
				wantTL = map[string]string{} // no lane is drawn thin
			}
			if !maps.Equal(got.Notes.TL, wantTL) || !maps.Equal(got.Notes.Titles, want) {
				t.Errorf("%s: the untapped lanes say\n on the timeline %q\n in their titles %q\nwant %q", where, got.Notes.TL, got.Notes.Titles, want)
			}
			if w := wantStoreNote(tr, tapped, files, lanes); got.Notes.Store != w {
				t.Errorf("%s: the store panel says\n %q\nwant\n %q", where, got.Notes.Store, w)
			}
			if got.Open != (len(tr.Sources) > 0) {
				t.Errorf("%s: the source pane open is %t, with %d sources in the trace", where, got.Open, len(tr.Sources))
			}
			if !got.Open {
				continue
			}
			p := got.Pane
			var gotKeys []string
			for _, f := range p.Files {
				gotKeys = append(gotKeys, f.Key)
			}
			if !slices.Equal(gotKeys, keys) {
				t.Errorf("%s: the pane lists the files %q, want %q", where, gotKeys, keys)
				continue
			}
			if len(files) == 0 {
				if p.Lines != 0 || len(p.Ran) != 0 {
					t.Errorf("%s: no file, yet the code shows %d lines", where, p.Lines)
				}
				continue
			}
			for j, f := range files {
				if g := p.Files[j]; g.Path != f.Path || g.Part != f.Part || g.N != fmt.Sprintf("×%d", f.Count) {
					t.Errorf("%s: the pane lists %+v, want path %q, part %q, ×%d", where, g, f.Path, f.Part, f.Count)
				}
			}
			// The file the pane opens on (the one shown last, if the
			// step has it, else its first) is that file.
			sel := slices.IndexFunc(p.Files, func(f paneEntry) bool { return f.Sel })
			if sel < 0 {
				t.Errorf("%s: the pane opened with no file selected", where)
			} else {
				checkFile(t, where, files[sel], p, tr.Texts[files[sel].Key])
			}
			if len(got.Files) != len(walk) {
				t.Fatalf("%s: the page showed %d files, want %d", where, len(got.Files), len(walk))
			}
			for j, f := range draw[:len(walk)] {
				checkFile(t, where, f, got.Files[j], tr.Texts[f.Key])
			}
		}
	}
	if err := b.Eval("tracePage.source(false)", new(any)); err != nil {
		t.Fatal(err)
	}
}

// Shown is what CheckSource has shown in turn: each file with what the
// page drew it from (stepInput).
type Shown map[string]bool

// stepInput is what the page draws file key from in step st: the
// file's entries in the step's source messages, in order, as JSON.
func stepInput(tr trace.Trace, st int, key string) string {
	var in []trace.SourceFile
	for _, s := range tr.Sources {
		if s.Step != st {
			continue
		}
		for _, f := range s.Files {
			if trace.SourceKey(f) == key {
				in = append(in, f)
			}
		}
	}
	b, err := json.Marshal(struct {
		Key   string
		Files []trace.SourceFile
	}{key, in})
	if err != nil {
		panic(err) // a trace's files always marshal
	}
	return string(b)
}

// jsonStrings is s as a JavaScript array of strings.
func jsonStrings(s []string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // strings always marshal
	}
	return string(b)
}

// storeNoteFuncs is how many functions the store panel names (the
// page's STORE_NOTE_FUNCS).
const storeNoteFuncs = 3

// wantStoreNote is what the store panel says at a step of a finished
// run, "" when it lists the store (the store lane has events): with
// sources, what the step ran of the part "store" (lanes, files: the
// step's, from wantSource), its functions by count, most first, then
// by name.
func wantStoreNote(tr trace.Trace, tapped []bool, files []paneFile, lanes map[string]int) string {
	store := slices.IndexFunc(tr.Lanes, func(n string) bool {
		n = strings.ToLower(n)
		return strings.Contains(n, "store") || strings.Contains(n, "indexer")
	})
	switch {
	case store < 0:
		return "this chapter has no store lane"
	case tapped[store]:
		return ""
	}
	const untapped = "this chapter's store is not tapped"
	if len(tr.Sources) == 0 {
		return untapped
	}
	name := tr.Lanes[store]
	n := lanes[name]
	if n == 0 {
		return untapped + "; none of its code counted in this step"
	}
	by := map[string]int{}
	for _, f := range files {
		if f.Part != name {
			continue
		}
		for _, fn := range f.Funcs {
			var c int
			fmt.Sscanf(fn.Count, "×%d", &c)
			if c > 0 {
				by[fn.Name] += c
			}
		}
	}
	names := slices.SortedFunc(maps.Keys(by), func(x, y string) int {
		return cmp.Or(cmp.Compare(by[y], by[x]), cmp.Compare(x, y))
	})
	var shown []string
	for _, fn := range names[:min(storeNoteFuncs, len(names))] {
		shown = append(shown, fmt.Sprintf("%s ×%d", fn, by[fn]))
	}
	more := ""
	if len(names) > storeNoteFuncs {
		more = fmt.Sprintf(" and %d more", len(names)-storeNoteFuncs)
	}
	return fmt.Sprintf("%s; in this step its code ran ×%d, counted, not sequenced: %s%s (s shows the lines)",
		untapped, n, strings.Join(shown, ", "), more)
}

func checkFile(t testing.TB, where string, f paneFile, p shownPane, text string) {
	t.Helper()
	where += ", " + f.Path
	for _, g := range p.Files {
		if g.Key != f.Key {
			continue
		}
		if !g.Sel || g.Path != f.Path || g.Part != f.Part || g.N != fmt.Sprintf("×%d", f.Count) {
			t.Errorf("%s: the file's entry is %+v, want path %q, part %q, ×%d, selected", where, g, f.Path, f.Part, f.Count)
		}
	}
	var funcs []paneFunc
	for _, fn := range p.Funcs {
		funcs = append(funcs, paneFunc{Name: fn.Name, Href: fn.Href, Line: fn.Line, Count: fn.Count})
	}
	if !slices.Equal(funcs, f.Funcs) {
		t.Errorf("%s: the functions are\n %+v\nwant\n %+v", where, funcs, f.Funcs)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if p.Lines != len(lines) {
		t.Errorf("%s: the code shows %d lines, the file has %d", where, p.Lines, len(lines))
	}
	for _, fn := range f.Funcs {
		if got := p.Texts[fmt.Sprint(fn.Line)]; got != lines[fn.Line-1] {
			t.Errorf("%s: line %d shows %q, the file's line is %q", where, fn.Line, got, lines[fn.Line-1])
		}
	}
	want := map[string]string{}
	for l, n := range f.Ran {
		want[fmt.Sprint(l)] = fmt.Sprintf("×%d", n)
	}
	got := map[string]string{}
	for _, r := range p.Ran {
		got[r[0]] = r[1]
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: %d lines highlighted, want %d; first differences: %s", where, len(got), len(want), firstDiffs(got, want))
	}
	if mod, _, _ := strings.Cut(f.Key, "@"); !strings.HasSuffix(p.Title, f.Path) || !strings.HasPrefix(p.Title, mod+"@") {
		t.Errorf("%s: the code's title is %q", where, p.Title)
	}
}

func firstDiffs(got, want map[string]string) string {
	var d []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			d = append(d, fmt.Sprintf("line %s: %q, want %q", k, got[k], want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("line %s: %q, want none", k, got[k]))
		}
	}
	return strings.Join(d[:min(5, len(d))], "; ")
}
