package reliability

import (
	"bufio"
	"context"
	"io"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptRealCluster presses Ctrl-C (SIGINT, or SIGTERM as a
// service manager would send it) in the middle of every chapter run on the
// real-cluster path, at a moment made certain: the workshop cluster
// holds every watch request, so the chapter has printed its first line,
// has made its first objects (most chapters make some before they
// watch), and waits on a watch. It must exit with status 130 after one
// line on stderr, having deleted what it made.
func TestInterruptRealCluster(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	for i, ch := range withCluster(t) {
		// Main treats both signals alike: SIGTERM for one chapter.
		sig := syscall.SIGINT
		if i == 0 {
			sig = syscall.SIGTERM
		}
		t.Run(ch.name+"/"+sig.String(), func(t *testing.T) {
			t.Parallel()
			interruptReal(t, ch, sig)
		})
	}
}

func interruptReal(t *testing.T, ch chapter, sig syscall.Signal) {
	srv, kubeconfig, admin := workshop(t)
	ns := "interrupt-" + ch.name[:2]
	srv.HoldWatches()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd, _, stderr := ch.command(ctx, env(t), "--kubeconfig", kubeconfig, "--namespace", ns)
	cmd.Stdout = nil
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	first, err := out.ReadString('\n')
	if err != nil {
		_ = cmd.Wait()
		t.Fatalf("no first line: %v; stderr:\n%s", err, stderr)
	}
	// Tests may poll: wait until the chapter's watch is held.
	for srv.HeldWatches() == 0 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	made := leftovers(t, admin, ns)
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(out)
	_ = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("still running %v after the signal; stacks:\n%s", limit, stderr)
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit status %d, want 130; stdout:\n%s%s", code, first, rest)
	}
	want := ch.name + ": interrupted, cleaned up"
	if errs := errorLines(ch, stderr.String()); len(errs) != 1 || errs[0] != want {
		t.Errorf("stderr:\n%s\nwant one line %q", stderr, want)
	}
	if left := leftovers(t, admin, ns); len(left) > 0 {
		t.Errorf("left behind in namespace %s: %v", ns, left)
	}
	t.Logf("interrupted after %q; cleaned up %v", strings.TrimSpace(first), made)
}

// TestInterruptAtStepPrompt presses Ctrl-C in the middle of every
// chapter on its default path, the embedded workshop cluster, which runs
// inside the chapter's process. The moment is made certain with --step
// and a terminal as stdin: the test presses Enter at the prompt before
// the first step, so the chapter runs that step and waits for Enter before
// the second. Ctrl-C there must end it at once (status 130, one line on
// stderr), not whenever Enter is pressed.
func TestInterruptAtStepPrompt(t *testing.T) {
	t.Parallel()
	for _, ch := range builtChapters(t) {
		t.Run(ch.name, func(t *testing.T) {
			t.Parallel()
			keyboard, tty := openTerminal(t)
			ctx, cancel := context.WithTimeout(t.Context(), limit)
			defer cancel()
			cmd, _, _ := ch.command(ctx, env(t), "--step")
			cmd.Stdin, cmd.Stderr = tty, nil
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Read stderr up to a prompt, which ends in no newline.
			var seen []byte
			buf := make([]byte, 4096)
			awaitPrompt := func(which string) {
				for !strings.Contains(string(seen), "press Enter for "+which) {
					n, err := stderr.Read(buf)
					if err != nil {
						_ = cmd.Wait()
						t.Fatalf("no prompt for Enter before %s: %v; stderr:\n%s", which, err, seen)
					}
					seen = append(seen, buf[:n]...)
				}
			}
			awaitPrompt("the first step")
			if _, err := keyboard.WriteString("\n"); err != nil {
				t.Fatal(err)
			}
			awaitPrompt("the next step")
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(stderr)
			_ = cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("still waiting for Enter %v after Ctrl-C", limit)
			}
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit status %d, want 130", code)
			}
			// The prompt's line ends, then the one line.
			want := "\n" + ch.name + ": interrupted, cleaned up\n"
			if string(rest) != want {
				t.Errorf("stderr after the prompt: %q, want %q", rest, want)
			}
		})
	}
}
