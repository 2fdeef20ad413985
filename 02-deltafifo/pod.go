package main

import "fmt"

// Pod stands in for a Kubernetes object. A queue does not care what
// it holds: it only needs a key, which podKey supplies.
type Pod struct {
	Name    string
	Version int
}

func pod(name string, version int) Pod {
	return Pod{Name: name, Version: version}
}

func (p Pod) String() string { return fmt.Sprintf("%s v%d", p.Name, p.Version) }
