package source

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"golang.org/x/term"
)

// The environment of the runs Rerun starts.
const (
	// EnvChild is set in the chapter Rerun runs: it must be
	// instrumented, and must not re-run itself again.
	EnvChild = "INFORMER_WALKTHROUGH_SOURCE"
	// EnvCopy asks the binary go run built to copy itself to this path
	// and exit (CopyRequested): go run keeps what it links in the build
	// cache, so a second --source run of a chapter links nothing, where
	// go build -o would link every time. (check/reliability builds its
	// binary of every chapter the same way.)
	EnvCopy = "INFORMER_WALKTHROUGH_SOURCE_COPY"
)

// CopyRequested is the first thing a chapter's main does: if Rerun built
// this binary only to have it copied, it copies itself and reports true
// (then main exits with code).
func CopyRequested() (code int, done bool) {
	to := os.Getenv(EnvCopy)
	if to == "" {
		return 0, false
	}
	if err := copySelf(to); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	return 0, true
}

func copySelf(to string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Rerun runs the chapter again, built with client-go instrumented: go
// run builds it (-cover over Packages and the chapter's own package,
// which ClearCounters needs), and the instrumented binary runs with the
// same arguments, stdin, stdout and stderr. It returns the chapter's exit
// status, or an error if it could not be built or started (its
// message begins "--source:"; the caller puts the chapter's name first).
func Rerun(chapter string, args []string, stdout, stderr io.Writer) (int, error) {
	if os.Getenv(EnvChild) != "" {
		return 1, errors.New("--source: this binary was built without coverage, though --source built it (is GOFLAGS overriding -cover?)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		return 1, errors.New("--source needs the Go toolchain on PATH: it builds the chapter again with client-go instrumented (go run -cover)")
	}
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Path == "" || info.Path == "command-line-arguments" {
		return 1, errors.New("--source: this binary does not say which package it was built from; run the chapter with go run ./NN-chapter --source")
	}
	root, err := moduleRoot()
	if err != nil {
		return 1, err
	}
	tmp, err := os.MkdirTemp("", "informer-walkthrough-source")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(tmp)
	// A Ctrl-C at the terminal reaches this process and the go command
	// or the chapter it runs: this one waits for them to end, and exits
	// as the chapter does (or says it was interrupted during the build).
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	interrupted := func() bool {
		select {
		case <-sig:
			return true
		default:
			return false
		}
	}

	// Build: go run, which copies the binary it built to bin and exits.
	bin := filepath.Join(tmp, "chapter")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	// The first build takes a while: a person at a terminal is told
	// why; a pipe or a test sees only the chapter's lines, or one
	// line if it fails.
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(stderr, "%s: --source: building the chapter with client-go instrumented (go run -cover: the first build takes a minute or two, later ones come from the build cache)\n", chapter)
	}
	build := exec.Command("go", BuildArgs(info.Path)...)
	build.Dir = root
	build.Env = append(os.Environ(), EnvCopy+"="+bin)
	log, err := build.CombinedOutput()
	if interrupted() {
		return 130, errors.New("--source: interrupted while building the chapter")
	}
	if err != nil {
		return 1, fmt.Errorf("--source: building with coverage failed: %s", buildError(log, err))
	}

	// Run: the instrumented chapter, in place of this one. A SIGTERM
	// sent to this one alone is passed on.
	run := exec.Command(bin, args...)
	run.Stdin, run.Stdout, run.Stderr = os.Stdin, stdout, stderr
	run.Env = append(os.Environ(), EnvChild+"=1", "GOCOVERDIR="+tmp)
	if err := run.Start(); err != nil {
		return 1, fmt.Errorf("--source: %v", err)
	}
	go func() {
		for s := range sig {
			if s == syscall.SIGTERM {
				_ = run.Process.Signal(s)
			}
		}
	}()
	err = run.Wait()
	signal.Stop(sig)
	close(sig)
	if err == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code >= 0 {
			return code, nil
		}
		return 130, nil // ended by a signal
	}
	return 1, fmt.Errorf("--source: %v", err)
}

// BuildArgs are the go command's arguments that build pkg (a chapter's
// import path) for --source and run it.
func BuildArgs(pkg string) []string {
	return []string{"run", "-cover", "-covermode=atomic", "-coverpkg=" + strings.Join(append(Packages[:len(Packages):len(Packages)], pkg), ","), pkg}
}

// buildError is the line of go's output that says why a build failed
// (not its warnings about patterns no chapter imports).
func buildError(log []byte, err error) string {
	for _, l := range strings.Split(string(log), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "warning:") && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return err.Error()
}

// moduleRoot is the course's folder, from where this file was compiled.
func moduleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if ok {
		root := filepath.Join(filepath.Dir(file), "..", "..")
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root, nil
		}
	}
	return "", errors.New("--source: the course's source is not where this binary was built from; run the chapter from a clone with go run ./NN-chapter --source")
}
