//go:build solution

// Reference answers to the exercises in exercises.go. They are built
// only with the solution tag:
//
//	go test -tags solution ./02-deltafifo -run Exercise -v

package main

import (
	"errors"

	"k8s.io/client-go/tools/cache"

	"github.com/informer-walkthrough/informer-walkthrough/internal/show"
)

// Exercise 3. Close first: a closed queue still hands out what it
// holds, and once it is empty PopBatch returns ErrFIFOClosed instead
// of blocking. That is the only way to drain a queue that has no Len.
func drainBatches(q cache.QueueWithBatch) ([]string, error) {
	q.Close()
	var lines []string
	batch := func(deltas []cache.Delta, _ bool) error {
		lines = append(lines, "batch "+show.Deltas(deltas))
		return nil
	}
	single := func(obj any, _ bool) error {
		deltas, ok := obj.(cache.Deltas)
		if !ok {
			return errors.New("processSingle was handed no Deltas")
		}
		lines = append(lines, "single "+show.Deltas(deltas))
		return nil
	}
	for {
		err := q.PopBatch(batch, single)
		if errors.Is(err, cache.ErrFIFOClosed) {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}
