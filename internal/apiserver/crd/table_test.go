package crd

import (
	"context"
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// TestCRDTable: kubectl get crd asks for a Table; kube-apiserver answers
// with its default TableConvertor's columns, Name and Created At, not
// 406 Not Acceptable.
func TestCRDTable(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{Extend: Serve})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := rest.CopyConfig(srv.Config())
	cfg.GroupVersion = &apiextensionsv1.SchemeGroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rc.Get().Resource("customresourcedefinitions").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		DoRaw(context.Background())
	if err != nil {
		t.Fatalf("Table of CRDs: %v", err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name+"/"+c.Type)
	}
	if len(names) != 2 || names[0] != "Name/string" || names[1] != "Created At/date" {
		t.Errorf("columns %v, want [Name/string Created At/date]", names)
	}
}
