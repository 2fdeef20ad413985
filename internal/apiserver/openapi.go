package apiserver

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// OpenAPI v3: the schemas of the served kinds, at /openapi/v3 (an index
// naming one document per group-version) and /openapi/v3/api/v1,
// /openapi/v3/apis/apps/v1. kubectl reads them to validate what kubectl
// apply sends (it checks that the PATCH operation of the kind's path
// takes fieldValidation, then lets the server validate) and for kubectl
// explain. The documents are kube-apiserver v1.36.3's own, filtered by
// openapi/gen.go to the paths of the resources served here and the
// schemas those reach, one per served group-version; they are embedded
// gzip-compressed (about 390 KB), and read only when first asked for.
//
// The apps/v1 document also describes autoscaling/v1 Scale, the kind of
// the deployments' scale subresource: scale.go's field manager reads its
// schema from there, as kube-apiserver's reads every schema from its
// OpenAPI models.

//go:embed openapi/*.json.gz
var openAPIFiles embed.FS

// openAPIDocument is one served group-version document.
type openAPIDocument struct {
	path string // "api/v1", "apis/apps/v1"
	file string // under openapi/
	json []byte // uncompressed
	gz   []byte
	hash string // kube-openapi's: SHA-512 of the JSON, upper-case hex
}

// openAPIDocuments reads the embedded documents once; they are read-only
// and shared by every server in the process.
var openAPIDocuments = sync.OnceValues(func() ([]*openAPIDocument, error) {
	entries, err := openAPIFiles.ReadDir("openapi")
	if err != nil {
		return nil, err
	}
	var docs []*openAPIDocument
	for _, e := range entries {
		// apis__apps__v1.json.gz is the document of apis/apps/v1.
		path := strings.ReplaceAll(strings.TrimSuffix(e.Name(), ".json.gz"), "__", "/")
		docs = append(docs, &openAPIDocument{path: path, file: e.Name()})
	}
	for _, d := range docs {
		gz, err := openAPIFiles.ReadFile("openapi/" + d.file)
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			return nil, err
		}
		if d.json, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
		d.gz = gz
		d.hash = fmt.Sprintf("%X", sha512.Sum512(d.json))
	}
	return docs, nil
})

// serveOpenAPI answers /openapi/v3 and its documents; false for other
// paths.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) bool {
	path, ok := strings.CutPrefix(r.URL.Path, "/openapi/v3")
	if !ok || r.Method != http.MethodGet {
		return false
	}
	docs, err := openAPIDocuments()
	if err != nil {
		writeError(w, err)
		return true
	}
	if path == "" || path == "/" {
		// The index: each document's URL carries its hash, so that
		// clients may cache it (client-go's openapi3 root does).
		type entry struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		}
		index := struct {
			Paths map[string]entry `json:"paths"`
		}{Paths: map[string]entry{}}
		for _, d := range docs {
			index.Paths[d.path] = entry{"/openapi/v3/" + d.path + "?hash=" + d.hash}
		}
		w.Header().Set("Cache-Control", "no-cache, private")
		writeJSON(w, http.StatusOK, index)
		return true
	}
	for _, d := range docs {
		if path != "/"+d.path {
			continue
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Etag", `"`+d.hash+`"`)
		if r.URL.Query().Get("hash") == d.hash {
			w.Header().Set("Cache-Control", "public, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache, private")
		}
		body := d.json
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			body = d.gz
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return true
	}
	return false
}

// scaleTypeConverter knows autoscaling/v1 Scale, from the apps/v1
// document. Built once: it is read-only.
var scaleTypeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
	return openAPITypeConverter("apis/apps/v1")
})

// openAPITypeConverter builds a field manager's type converter from the
// schemas of the document at path, as kube-apiserver builds its own from
// its OpenAPI models.
func openAPITypeConverter(path string) (managedfields.TypeConverter, error) {
	docs, err := openAPIDocuments()
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		if d.path != path {
			continue
		}
		var doc struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(d.json, &doc); err != nil {
			return nil, err
		}
		return managedfields.NewTypeConverter(doc.Components.Schemas, false)
	}
	return nil, fmt.Errorf("no OpenAPI document %s", path)
}
