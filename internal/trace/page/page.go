// Package page is the one HTML page that shows a chapter's trace: the
// pipeline's lanes, the events moving along them, the step headings as the
// chapters of the timeline, the store at the cursor and the chapter's output.
// The page is plain HTML, CSS, JavaScript and SVG in one file, page.html,
// with nothing to fetch: it works from file:// (a --trace file) and from the
// loopback server of --view alike.
//
// The page gets its data from what is put in place of the marker
// <!--TRACE--> (just before its own script, at the end of <body>): Offline
// embeds a whole trace, Live points the page at a Server-Sent Events stream
// whose messages are JSON: {"type":"meta",...} first, then "step", "output",
// "object" and "event" in seq order, "source" and "text" as each step's
// counters come (--source), and "end" (see the trace package).
//
// The timeline's positions are the step headings and the events, in seq
// order; the cursor is one of them. Each event is a box as wide as its text
// (the verb; the object, or for a request its resource and the query
// parameters that change what it does, the whole text being in the
// details), packed so that boxes on different lanes may stand above one
// another. A box links to the one before it that carried the same object
// (same key and resourceVersion on a lane above, or the same key on its own
// or the neighbouring lane, close by; an answer to its request); the links
// of the cursor's object are drawn black, and a token slides along the last
// one as the cursor arrives. A lane with no event in the run is drawn thin
// with "no tap in this chapter", and the store panel says when the store
// lane is empty.
//
// With --source the trace holds what each step ran of client-go (its
// sources, and the files' texts). The source pane (the Source button, or
// s) takes the board's place and shows, for the step at the cursor, each
// file the step ran (all the step's source messages added up), its
// functions with their counts, each linked to its line at the module's
// tag (sourceURL, the page's one mapping from a module to its repository),
// and the file's text with the lines that ran highlighted and counted (a
// line in two blocks shows the larger count). A lane with no tap then
// says "ran ×N, counted, not sequenced", N the sum of the counts of the
// functions of the step's files whose part is that lane, or that nothing
// was counted in the step. Keys: space plays and pauses, → and ←
// move one position, ↓ ↑ PageDown PageUp one step (a presenter's clicker
// sends PageDown and PageUp), Home and End the ends (End follows a live run
// again). A live page follows the newest event until the user pauses or moves
// back; "live ▸" follows again.
//
// For tests the page shows its state in the DOM: each lane element has
// data-lane (its name) and data-count (its events up to and including the
// cursor); #step-title is the current step's heading; #steps lists every
// heading; #store lists "key rv" lines, the store at the cursor; #cursor has
// data-seq. The source pane: #src-files lists the step's files (data-key,
// data-path, data-part; .n the count; .sel the one shown), #src-funcs the
// shown file's functions (data-func, data-line, data-count; a link), and
// #src-code the file's lines, those that ran with class "ran", data-line
// and data-count; an untapped lane's note on the timeline is
// text[data-note-lane], and its element has data-ran. window.traceReady is true once the data is there (live: once
// "meta" came), window.traceDone once the run is whole (live: after "end"),
// window.traceError says why a trace could not be read; window.tracePage
// moves the cursor (seek, seekSeq, play), opens the source pane (source,
// sourceFile) and reports it.
package page

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"strconv"
)

//go:embed page.html
var html []byte

// Marker is the comment in page.html that HTML replaces.
const Marker = "<!--TRACE-->"

// HTML returns the page with Marker replaced by inject: Offline(trace) or
// Live(path).
func HTML(inject string) []byte {
	return bytes.Replace(html, []byte(Marker), []byte(inject), 1)
}

// Offline returns what HTML injects for a self-contained replay: the trace
// JSON, gzipped and base64-encoded, in
// <script id="trace-data" type="application/gzip+base64">. The page
// decompresses it with the browser's DecompressionStream("gzip"). Base64
// holds no '<', so no trace text can end the script element early.
func Offline(traceJSON []byte) string {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.DefaultCompression) // the level is valid: no error
	w.Write(traceJSON)                                       // a bytes.Buffer does not fail
	w.Close()
	return `<script id="trace-data" type="application/gzip+base64">` +
		base64.StdEncoding.EncodeToString(z.Bytes()) + `</script>`
}

// Live returns what HTML injects for a page that follows a run: the path of
// the Server-Sent Events stream (the page's own origin).
func Live(eventsPath string) string {
	// strconv.Quote escapes '<' in no way; a path has none, but keep the
	// script element closed whatever the path holds.
	q := bytes.ReplaceAll([]byte(strconv.Quote(eventsPath)), []byte("<"), []byte(`\u003c`))
	return `<script>window.TRACE_LIVE = ` + string(q) + `;</script>`
}
