package reliability

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// badCase is one mistake a learner can make.
type badCase struct {
	name string
	args []string
	env  []string
	want string // what the one error line must contain
	// forbid, if set, runs the chapter against a workshop cluster that
	// answers 403 Forbidden to this verb on every resource. A list is
	// refused first to the clean-up of leftovers, before the chapter
	// starts; a watch (an informer's) and a create, to the chapter.
	forbid string
	// own: the mistake is met by the chapter's own code (its run
	// function), so every chapter runs it. Every other mistake is met
	// before, by the shared main (chapter.entry), and runs on one
	// chapter of each entry (takeTurns).
	own bool
}

// chapterCases are the mistakes a learner can make with a chapter's own
// flags (cluster.Extras.Flags).
var chapterCases = map[string][]badCase{
	"12-scale": {
		{name: "pods not a number", args: []string{"--pods", "x"},
			want: `invalid value "x" for flag -pods: want a number of pods from 1 to 100000`},
		{name: "pods negative", args: []string{"--pods", "-1"},
			want: `invalid value "-1" for flag -pods: want a number of pods from 1 to 100000`},
	},
}

// rbacHint ends the line of every 403.
const rbacHint = "(grant the RBAC Role in the course README)"

// TestBadInput runs the chapters with every mistake in the issue's
// list: every chapter with each mistake its own code meets, and one
// chapter of each shared main with each mistake that main meets before
// the chapter's code runs (takeTurns). Each must end within 15 s with
// exit status 1 and exactly one line on stderr that names what to fix
// (besides the "using context" line a real-cluster run starts with): no
// panic, no goroutine dump, no client-go log lines, no credentials, and
// nothing of the course's left in the namespace.
func TestBadInput(t *testing.T) {
	t.Parallel()
	// A kubeconfig that is not YAML.
	malformed := filepath.Join(t.TempDir(), "malformed")
	if err := os.WriteFile(malformed, []byte("clusters: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A loopback port nobody listens on.
	closed := writeKubeconfig(t, fmt.Sprintf("https://127.0.0.1:%d", closedPort(t)))
	// An HTTPS server whose certificate no kubeconfig CA signed.
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake errors are expected
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	untrusted := writeKubeconfig(t, tlsSrv.URL)
	// A server that takes the certificate but not the token (expired).
	refusing := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
	}))
	refusing.Config.ErrorLog = log.New(io.Discard, "", 0)
	refusing.StartTLS()
	t.Cleanup(refusing.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: refusing.Certificate().Raw})
	expired := writeKubeconfigWith(t, refusing.URL, ", certificate-authority-data: "+b64(ca), "")
	_, reachable, _ := workshop(t)
	// A loopback port somebody listens on.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	busyPort := fmt.Sprint(busy.Addr().(*net.TCPAddr).Port)

	cases := []badCase{
		{name: "missing kubeconfig", args: []string{"--kubeconfig", "/nonexistent/config"},
			want: "--kubeconfig /nonexistent/config: no such file or directory"},
		{name: "KUBECONFIG names a missing file", env: []string{"KUBECONFIG=/nonexistent/config"},
			want: "the kubeconfig names no cluster: give --kubeconfig PATH or --context NAME"},
		{name: "malformed kubeconfig", args: []string{"--kubeconfig", malformed},
			want: "cannot read kubeconfig"},
		{name: "unknown context", args: []string{"--kubeconfig", reachable, "--context", "nope"},
			want: `context "nope" does not exist`},
		{name: "closed port", args: []string{"--kubeconfig", closed},
			want: "connect: connection refused (is the cluster running?)"},
		{name: "untrusted certificate", args: []string{"--kubeconfig", untrusted},
			want: "x509: certificate signed by unknown authority (the kubeconfig's certificate-authority does not match the server)"},
		{name: "expired token", args: []string{"--kubeconfig", expired},
			want: "Unauthorized (the server refused the kubeconfig's credentials: log in again)"},
		{name: "forbidden list", forbid: "list", want: `cannot list resource`},
		{name: "forbidden watch", forbid: "watch", own: true, want: `cannot watch resource`},
		{name: "forbidden create", forbid: "create", own: true, want: `cannot create resource`},
		{name: "unknown flag", args: []string{"--bogus"},
			want: "flag provided but not defined: -bogus (see --help)"},
		{name: "bad namespace", args: []string{"--namespace", "Not_A_Name"},
			want: `--namespace "Not_A_Name" is not a valid namespace name`},
		{name: "trace: unwritable file", args: []string{"--trace", "/nonexistent/dir/t.html"},
			want: "--trace: cannot write the trace: open /nonexistent/dir/t.html: no such file or directory"},
		{name: "trace: view port not a number", args: []string{"--view=eighty"},
			want: `invalid boolean value "eighty" for -view: want no value (a free port) or a port from 1 to 65535, not "eighty" (see --help)`},
		{name: "trace: view port taken", args: []string{"--view=" + busyPort},
			want: "--view: cannot serve the page: listen tcp 127.0.0.1:" + busyPort + ": bind: address already in use"},
	}
	chs := builtChapters(t)
	if !slices.ContainsFunc(chs, func(ch chapter) bool { return ch.entry != "" }) {
		t.Error("no chapter's main is read as a call of a shared main: build's sharedMain no longer matches them")
	}
	for i, tc := range cases {
		applies := func(ch chapter) bool {
			// No cluster: there is nothing to refuse, and cluster flags
			// are ignored (see TestInMemoryIgnoresClusterFlags).
			return !ch.offline || tc.forbid == "" && len(tc.args) > 0 &&
				(strings.HasPrefix(tc.name, "unknown flag") || strings.HasPrefix(tc.name, "trace: "))
		}
		run := slices.DeleteFunc(slices.Clone(chs), func(ch chapter) bool { return !applies(ch) })
		if !tc.own {
			run = takeTurns(chs, i, applies)
		}
		for _, ch := range run {
			t.Run(ch.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				badInput(t, ch, tc)
			})
		}
	}
	for _, ch := range chs {
		for _, tc := range chapterCases[ch.name] {
			t.Run(ch.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				badInput(t, ch, tc)
			})
		}
	}
}

// takeTurns returns the chapters that run the i-th of a list of mistakes
// which the shared mains meet before a chapter's own code runs: of the
// chapters it applies to, every one that has no shared entry (it could
// meet the mistake in code of its own), and for each shared entry one
// chapter, in turn (the i-th mistake on the i-th such chapter, round the
// list), so that each chapter still runs some.
//
// Running them on every chapter would only repeat them: the same input
// to the same code fails the same way, but for the chapter's name, which
// each chapter's own mistakes check. chapter.entry says that a chapter's
// run is the shared code's until its run function is called; a chapter
// whose main does anything else has no entry, and runs them all.
func takeTurns(chs []chapter, i int, applies func(chapter) bool) []chapter {
	var run []chapter
	var entries []string
	byEntry := map[string][]chapter{}
	for _, ch := range chs {
		if !applies(ch) {
			continue
		}
		if ch.entry == "" {
			run = append(run, ch)
			continue
		}
		// cluster.Main is cluster.MainWith without extras: one entry.
		e := strings.TrimSuffix(ch.entry, "With")
		if byEntry[e] == nil {
			entries = append(entries, e)
		}
		byEntry[e] = append(byEntry[e], ch)
	}
	for _, e := range entries {
		run = append(run, byEntry[e][i%len(byEntry[e])])
	}
	return run
}

// TestInMemoryIgnoresClusterFlags: a class that runs every chapter
// against its cluster in one loop does not stop at 02-deltafifo, which
// runs in memory: it says once that it ignores the cluster flags, and
// exits 0.
func TestInMemoryIgnoresClusterFlags(t *testing.T) {
	t.Parallel() // it waits for the build: the tests that need none run meanwhile
	for _, ch := range builtChapters(t) {
		if !ch.offline {
			continue
		}
		for _, args := range [][]string{
			{"--kubeconfig", "/nonexistent/config"},
			{"--context", "kind-kind"},
			{"--namespace", "Not_A_Name"},
		} {
			t.Run(ch.name+"/"+args[0], func(t *testing.T) {
				t.Parallel()
				r := ch.run(t, env(t), args...)
				if r.code != 0 {
					t.Errorf("exit status %d, want 0; stderr:\n%s", r.code, r.stderr)
				}
				want := ch.name + ": runs in memory, no cluster needed: --kubeconfig, --context and --namespace are ignored\n"
				if r.stderr != want {
					t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, want)
				}
				if r.stdout == "" {
					t.Error("the chapter printed nothing")
				}
			})
		}
	}
}

func badInput(t *testing.T, ch chapter, tc badCase) {
	args, ns := tc.args, ""
	var srv *apiserver.Server
	var admin kubernetes.Interface
	if tc.forbid != "" {
		// The namespace exists (an admin made it), so the first
		// request refused is the chapter's own, or its clean-up's.
		var kubeconfig string
		srv, kubeconfig, admin = workshop(t)
		ns = tc.forbid + "-" + ch.name[:2]
		createNamespace(t, admin, ns)
		forbid(srv, tc.forbid)
		args = []string{"--kubeconfig", kubeconfig, "--namespace", ns}
	}
	r := ch.run(t, env(t, tc.env...), args...)

	if r.code != 1 {
		t.Errorf("exit status %d, want 1", r.code)
	}
	errs := errorLines(ch, r.stderr)
	if len(errs) != 1 || !strings.HasPrefix(errs[0], ch.name+": ") || !strings.Contains(errs[0], tc.want) {
		t.Errorf("stderr:\n%s\nwant exactly one line %q containing %q", r.stderr, ch.name+": …", tc.want)
	}
	if len(errs) > 0 {
		t.Log(errs[len(errs)-1]) // go test -v shows what a learner sees
	}
	if tc.forbid != "" && len(errs) == 1 && !strings.HasSuffix(errs[0], rbacHint) {
		t.Errorf("the error line does not end %q: %s", rbacHint, errs[0])
	}
	if strings.Contains(r.stdout+r.stderr, token) {
		t.Error("the output shows the kubeconfig's token")
	}
	if srv != nil {
		srv.ClearFaults()
		if left := leftovers(t, admin, ns); len(left) > 0 {
			t.Errorf("left behind in namespace %s: %v", ns, left)
		}
	}
}

// forbid makes the server answer 403 Forbidden, as kube-apiserver's RBAC
// authorizer words it, to verb on every resource the chapters use.
func forbid(srv *apiserver.Server, verb string) {
	for _, gr := range []schema.GroupResource{
		{Resource: "pods"}, {Resource: "configmaps"}, {Group: "apps", Resource: "deployments"},
		{Resource: "namespaces"}, {Resource: "nodes"},
		{Group: "course.example.com", Resource: "memos"},
		{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
	} {
		msg := fmt.Errorf("User %q cannot %s resource %q in API group %q", "learner", verb, gr.Resource, gr.Group)
		srv.InjectFault(apiserver.Fault{Verb: verb, Resource: gr.String(), Err: apierrors.NewForbidden(gr, "", msg)})
	}
}
