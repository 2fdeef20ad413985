package trace

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Format is the trace as a golden file holds it: per step, its events
// lane by lane in pipeline order, each lane's lines sorted, and a line
// that repeats counted (×n) rather than repeated. Sorted because an
// informer's goroutines run beside the chapter's, so the order between
// two events the chapter did not order (two informers' requests, the
// handler calls of an initial list) is not defined; what each step puts
// on each lane is. The page replays the order the taps saw.
//
// Events on a timer are listed once each, "×n varies"; those marked
// Maybe (a documented race that happens on some runs only) are left out.
//
// resourceVersions are masked (rv=N): where they are the lesson, the
// chapter prints them and its golden output pins them; here, two
// workers' writes would take them in either order.
func Format(t Trace) string {
	var b strings.Builder
	counted := 0 // how many events a timer repeats depends on the run
	for _, e := range t.Events {
		if !e.Timed {
			counted++
		}
	}
	// Not the objects: those a timer's events carry vary too.
	fmt.Fprintf(&b, "trace of %s: %d steps, %d events not on a timer (client-go %s)\n",
		t.Chapter, len(t.Steps), counted, t.ClientGo)
	byStep := make([][]Event, len(t.Steps)+1)
	for _, e := range t.Events {
		byStep[e.Step+1] = append(byStep[e.Step+1], e)
	}
	for i, events := range byStep {
		switch {
		case i == 0 && len(events) == 0:
			continue
		case i == 0:
			b.WriteString("before the first step\n")
		default:
			b.WriteString(t.Steps[i-1].Title + "\n")
		}
		for lane := range Lanes {
			var lines []string
			timed := map[string]bool{}
			for _, e := range events {
				if int(e.Lane) != lane || e.Maybe {
					continue
				}
				line := formatEvent(e)
				if e.Timed {
					line += "  (on a timer: ×n varies)"
					if timed[line] {
						continue
					}
					timed[line] = true
				}
				lines = append(lines, line)
			}
			slices.Sort(lines)
			for j := 0; j < len(lines); {
				n := 1
				for j+n < len(lines) && lines[j+n] == lines[j] {
					n++
				}
				count := ""
				if n > 1 {
					count = fmt.Sprintf("  ×%d", n)
				}
				fmt.Fprintf(&b, "  %-10s %s%s\n", Lanes[lane], lines[j], count)
				j += n
			}
		}
	}
	return b.String()
}

// resourceVersion matches a resourceVersion in an event's text.
var resourceVersion = regexp.MustCompile(`(rv=|resourceVersion="?|resource version: )\d+( \(\d+\))?`)

func formatEvent(e Event) string {
	s := e.Verb
	if e.Text != "" {
		s += " " + resourceVersion.ReplaceAllString(e.Text, "${1}N")
	}
	if len(e.Keys) > 0 {
		s += " keys=" + strings.Join(e.Keys, ",")
	}
	if e.Func != "" {
		if Source(e.Func) == "" {
			s += "  [unknown function " + e.Func + "]"
		} else {
			s += "  [" + e.Func + "]"
		}
	}
	return s
}
