package controller

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/informer-walkthrough/informer-walkthrough/workshop"
	"github.com/informer-walkthrough/informer-walkthrough/workshop/crds"
)

// TestEnvtestVsWorkshop is for the course's maintainers (BENCHMARKS.md,
// "The example controller's suite: envtest against the workshop cluster"):
// it runs this package's suite on envtest (a kube-apiserver and an etcd,
// from KUBEBUILDER_ASSETS) and on a workshop cluster, side by side, round
// after round in alternating order, and logs the medians of each phase:
// the server started with the Widget CRD served, the one test (a manager
// started, a Widget reconciled, changed and its ConfigMap remade), the
// server stopped.
func TestEnvtestVsWorkshop(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: no kube-apiserver and etcd to compare with (see BENCHMARKS.md)")
	}
	const rounds = 5
	servers := []struct {
		name  string
		start func() (cfg *rest.Config, stop func() error, err error)
	}{
		{"envtest", func() (*rest.Config, func() error, error) {
			env := &envtest.Environment{CRDDirectoryPaths: crdPaths, ErrorIfCRDPathMissing: true}
			cfg, err := env.Start()
			if err != nil {
				return nil, nil, err
			}
			return cfg, env.Stop, nil
		}},
		{"workshop", func() (*rest.Config, func() error, error) {
			c, err := workshop.New(crds.Served())
			if err != nil {
				return nil, nil, err
			}
			if _, err := crds.Install(t.Context(), c, crdPaths); err != nil {
				c.Close()
				return nil, nil, err
			}
			return c.Config(), c.Close, nil
		}},
	}
	phases := []string{"start", "test", "stop", "suite"}
	took := map[string]map[string][]time.Duration{} // server, phase: one per round
	for _, s := range servers {
		took[s.name] = map[string][]time.Duration{}
	}
	for round := range rounds {
		order := slices.Clone(servers)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, s := range order {
			t0 := time.Now()
			cfg, stop, err := s.start()
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			t1 := time.Now()
			ok := t.Run(fmt.Sprintf("%s/round%d", s.name, round+1), func(t *testing.T) { testWidget(t, cfg) })
			t2 := time.Now()
			if err := stop(); err != nil {
				t.Errorf("%s: stop: %v", s.name, err)
			}
			t3 := time.Now()
			if !ok {
				t.FailNow()
			}
			for i, d := range []time.Duration{t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t3.Sub(t0)} {
				took[s.name][phases[i]] = append(took[s.name][phases[i]], d)
			}
		}
	}

	var table strings.Builder
	fmt.Fprintf(&table, "medians of %d rounds:\n", rounds)
	fmt.Fprintf(&table, "| | envtest | workshop | workshop / envtest |\n|---|--:|--:|--:|\n")
	for _, p := range phases {
		e, w := median(took["envtest"][p]), median(took["workshop"][p])
		fmt.Fprintf(&table, "| %s | %s | %s | %.3f |\n", p, round(e), round(w), float64(w)/float64(e))
	}
	for _, s := range servers {
		for _, p := range phases {
			fmt.Fprintf(&table, "%s %s, each round: %v\n", s.name, p, roundAll(took[s.name][p]))
		}
	}
	t.Log("\n" + table.String())
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// round keeps three significant digits or so.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = round(d)
	}
	return out
}
