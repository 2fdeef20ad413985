// Package transcripttest reads the recorded transcripts of a real
// kube-apiserver v1.36.3 (internal/apiserver/testdata/transcripts, copied
// verbatim from the course's reference captures) and makes what cannot
// match between two servers comparable. The tests of internal/apiserver
// and of internal/apiserver/crd share it.
package transcripttest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Exchange is one request and its answer in a transcript.
type Exchange struct {
	Method, Path string // empty for a file that records an answer only
	Accept       string // the Accept header sent, where the transcript records it
	Request      []byte // the body sent, if any
	Code         int
	Header       http.Header
	Body         []byte  // the answer, when it is not a watch stream
	Events       []Frame // the answer, when it is a watch stream
}

// Frame is one line of a JSON watch stream.
type Frame struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// Read reads the transcript at path: sections that begin with
// "### METHOD PATH" (a "### Accept: ..." line may follow), then the
// request body, if any, then the answer: either a pretty-printed body
// ending in "--- HTTP <code>", or "HTTP/2 <code>", headers, a blank line
// and the body (a JSON document, base64 after "### body, base64", or a
// stream of one JSON event per line). The request body is one line
// before a "--- HTTP" answer, any number of lines before an "HTTP/"
// status line. A file that records only an answer (it starts with its
// status line) is one Exchange with no method or path.
func Read(t testing.TB, path string) []Exchange {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(path)
	var out []Exchange
	lines := strings.Split(strings.ReplaceAll(string(data), "\r", ""), "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "HTTP/") {
		lines = append([]string{"### - -"}, lines...) // an answer only
	}
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "### ") {
			i++
			continue
		}
		f := strings.Fields(lines[i])
		if len(f) < 3 || strings.ToUpper(f[1]) != f[1] {
			i++ // a comment: "### the same update again, ..."
			continue
		}
		ex := Exchange{Method: f[1], Path: f[2], Header: http.Header{}}
		if ex.Method == "-" {
			ex.Method, ex.Path = "", ""
		}
		if _, body, ok := strings.Cut(lines[i], " with body "); ok {
			ex.Request = []byte(body)
		}
		i++
		if i < len(lines) {
			if accept, ok := strings.CutPrefix(lines[i], "### Accept: "); ok {
				ex.Accept = accept
				i++
			}
		}
		if status := statusLine(lines, i); status > i {
			ex.Request = []byte(strings.Join(lines[i:status], "\n"))
			i = status
		} else if i < len(lines) && strings.HasPrefix(lines[i], "{") && json.Valid([]byte(lines[i])) {
			ex.Request = []byte(lines[i])
			i++
		}
		if i < len(lines) && strings.HasPrefix(lines[i], "HTTP/") {
			ex.Code, _ = strconv.Atoi(strings.Fields(lines[i])[1])
			for i++; i < len(lines) && lines[i] != ""; i++ {
				k, v, _ := strings.Cut(lines[i], ":")
				ex.Header.Add(k, strings.TrimSpace(v))
			}
		}
		j := i
		for j < len(lines) && lines[j] == "" {
			j++
		}
		if j < len(lines) && strings.HasPrefix(lines[j], "### body, base64") {
			i = j
			var b64 strings.Builder
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "### "); i++ {
				b64.WriteString(strings.TrimSpace(lines[i]))
			}
			raw, err := base64.StdEncoding.DecodeString(b64.String())
			if err != nil {
				t.Fatalf("%s: base64 body: %v", name, err)
			}
			ex.Body = raw
			out = append(out, ex)
			continue
		}
		var body []string
		for ; i < len(lines) && !strings.HasPrefix(lines[i], "### "); i++ {
			l := lines[i]
			if code, ok := strings.CutPrefix(l, "--- HTTP "); ok {
				ex.Code, _ = strconv.Atoi(code)
				continue
			}
			body = append(body, l)
		}
		text := strings.TrimSpace(strings.Join(body, "\n"))
		if strings.HasPrefix(text, `{"type":`) {
			for _, l := range strings.Split(text, "\n") {
				var fr Frame
				if err := json.Unmarshal([]byte(l), &fr); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				ex.Events = append(ex.Events, fr)
			}
		} else {
			ex.Body = []byte(text)
		}
		out = append(out, ex)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no exchange", name)
	}
	return out
}

// statusLine returns the index of the "HTTP/" line of the section whose
// request starts at i, or -1 if it has none.
func statusLine(lines []string, i int) int {
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "### "); i++ {
		if strings.HasPrefix(lines[i], "HTTP/") {
			return i
		}
	}
	return -1
}

// Norm returns a copy of a decoded JSON value with what cannot match
// between two servers made comparable: uids, timestamps and
// resourceVersions become placeholders (managedFields are compared, their
// times aside) and continue tokens are
// decoded, their resourceVersion a placeholder too.
func Norm(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			switch s, isString := e.(string); {
			case !isString:
				out[k] = Norm(e)
			case k == "uid":
				out[k] = "<uid>"
			case k == "resourceVersion" && s != "":
				out[k] = "<rv>"
			case k == "continue" && s != "":
				tok := DecodeToken(s)
				tok["rv"] = "<rv>"
				out[k] = tok
			case IsTimestamp(k):
				out[k] = "<time>"
			default:
				out[k] = e
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = Norm(e)
		}
		if len(out) > 1 && isManagedFields(out) {
			// Entries are ordered by time first: with a test's fixed
			// clock, a later write does not sort after.
			sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
		}
		return out
	}
	return v
}

func isManagedFields(list []any) bool {
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok || m["fieldsType"] != "FieldsV1" {
			return false
		}
	}
	return true
}

// IsTimestamp reports whether a key holds a time that Norm replaces.
func IsTimestamp(key string) bool {
	switch key {
	case "creationTimestamp", "deletionTimestamp", "lastTransitionTime", "lastProbeTime", "time":
		return true
	}
	return false
}

// DecodeToken decodes a continue token (base64 of a JSON object).
func DecodeToken(s string) map[string]any {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return map[string]any{"undecodable": s}
	}
	var tok map[string]any
	if err := json.Unmarshal(b, &tok); err != nil {
		return map[string]any{"undecodable": s}
	}
	return tok
}
