package tap

import (
	"context"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// Render is the events the recorder gets, each as line renders it, for
// show.Next and show.Sorted: a chapter's own lines, drawn from the
// typed events. An event line does not render (false) is skipped.
func (r *Recorder) Render(line func(Event) (string, bool)) show.Source {
	return rendered{r, line}
}

type rendered struct {
	r    *Recorder
	line func(Event) (string, bool)
}

func (s rendered) Await(ctx context.Context, n int) ([]string, error) {
	var got []string
	for len(got) < n {
		e, err := s.r.Next(ctx)
		if err != nil {
			return got, err
		}
		if l, ok := s.line(e); ok {
			got = append(got, l)
		}
	}
	return got, nil
}
