package trace

// What a step ran, measured: with --source a chapter runs with client-go
// built for coverage, and at each step's end the counters say which of
// client-go's blocks ran and how often (internal/source reads them). The
// recorder keeps them beside the step's events, for the page's source
// pane and for the lanes a chapter has no tap in: those show the step's
// counted activity, which is counted, not sequenced.

// SourceStep is what one step ran of the instrumented packages.
type SourceStep struct {
	Step  int          `json:"step"`  // index into Trace.Steps; -1 before the first heading
	Files []SourceFile `json:"files"` // by Path
}

// SourceFile is one file of an instrumented module that the step ran.
type SourceFile struct {
	Module  string        `json:"module"`  // "k8s.io/client-go"
	Version string        `json:"version"` // "v0.37.2"
	Path    string        `json:"path"`    // in the module: "tools/cache/reflector.go"
	Part    string        `json:"part"`    // the pipeline part: a name in Lanes, or another part ("leader election", "informer loop")
	Funcs   []SourceFunc  `json:"funcs"`   // the functions entered, by Line
	Blocks  []SourceBlock `json:"blocks"`  // the blocks that ran, by Start
}

// SourceFunc is a function the step entered: Count is how many times its
// first block ran.
type SourceFunc struct {
	Name  string `json:"name"` // "(*Reflector).list"
	Line  int    `json:"line"` // where its declaration starts
	Count int    `json:"count"`
}

// SourceBlock is a run of lines the step ran Count times (a coverage
// block: Start and End lines, inclusive).
type SourceBlock struct {
	Start int `json:"start"`
	End   int `json:"end"`
	Count int `json:"count"`
}

// RecordSource adds what a step ran to the installed recorder, if any.
// text holds the text of each file in s.Files that the recorder does not
// hold yet (by Module@Version/Path), so that an offline page can show it.
func RecordSource(s SourceStep, text map[string]string) {
	if r := current.Load(); r != nil {
		r.RecordSource(s, text)
	}
}

// RecordSource is the package's RecordSource for this recorder.
func (r *Recorder) RecordSource(s SourceStep, text map[string]string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.t.Texts == nil {
		r.t.Texts = map[string]string{}
	}
	for k, v := range text {
		if _, ok := r.t.Texts[k]; !ok {
			r.t.Texts[k] = v
			r.sendLocked(Message{Type: "text", Name: k, Text: v})
		}
	}
	r.t.Sources = append(r.t.Sources, s)
	r.sendLocked(Message{Type: "source", Source: &s})
}

// SourceKey is the key of a file's text in Trace.Texts.
func SourceKey(f SourceFile) string { return f.Module + "@" + f.Version + "/" + f.Path }
