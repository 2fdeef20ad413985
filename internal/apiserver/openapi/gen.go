//go:build ignore

// gen.go filters kube-apiserver's OpenAPI v3 documents down to what the
// workshop cluster serves: the paths of its resources and the schemas
// they reach. Run from this folder, with the course's reference captures
// beside the repository:
//
//	go run gen.go ../../../../shared/reference/kube-apiserver-v1.36.3/openapi-v3
//
// It writes api__v1.json.gz and apis__apps__v1.json.gz, which openapi.go
// embeds.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// served are the resources of the workshop cluster (resources.go) and the
// subresources it serves.
var served = map[string][]string{
	"api__v1.json.gz":        {"namespaces", "nodes", "pods", "configmaps"},
	"apis__apps__v1.json.gz": {"deployments"},
}

var sources = map[string]string{
	"api__v1.json.gz":        "api-v1.json.gz",
	"apis__apps__v1.json.gz": "apis-apps-v1.json.gz",
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run gen.go DIR")
		os.Exit(2)
	}
	for out, resources := range served {
		if err := filter(filepath.Join(os.Args[1], sources[out]), out, resources); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

var ref = regexp.MustCompile(`"\$ref":\s*"#/components/schemas/([^"]+)"`)

func filter(src, out string, resources []string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	var doc struct {
		OpenAPI    string                     `json:"openapi"`
		Info       json.RawMessage            `json:"info"`
		Paths      map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas         map[string]json.RawMessage `json:"schemas"`
			SecuritySchemes json.RawMessage            `json:"securitySchemes,omitempty"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	// A path is kept if it is a served resource's collection, object
	// or served subresource (status; scale for deployments), namespaced
	// or across namespaces; not the deprecated /watch/ paths.
	kept := regexp.MustCompile(`^/apis?(/[^/]+)?/v1(/namespaces/\{namespace\})?/(` + strings.Join(resources, "|") +
		`)(/\{name\}(/status|/scale)?)?$`)
	keep := map[string]json.RawMessage{}
	for p, v := range doc.Paths {
		if kept.MatchString(p) {
			keep[p] = v
		}
	}
	// The schemas those paths reach, transitively.
	schemas := map[string]json.RawMessage{}
	var visit func(b []byte)
	visit = func(b []byte) {
		for _, m := range ref.FindAllSubmatch(b, -1) {
			name := string(m[1])
			if _, seen := schemas[name]; seen {
				continue
			}
			s, ok := doc.Components.Schemas[name]
			if !ok {
				continue
			}
			schemas[name] = s
			visit(s)
		}
	}
	var names []string
	for p := range keep {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		visit(keep[p])
	}
	doc.Paths = keep
	doc.Components.Schemas = schemas
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	fmt.Printf("%s: %d paths, %d schemas, %d bytes JSON, %d bytes gzip (from %d bytes JSON)\n", out, len(keep), len(schemas), len(b), buf.Len(), len(raw))
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
