package apiserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Scheme is the workshop cluster's own scheme: the built-in types of
// client-go's scheme, registered as client-go registers them
// (k8s.io/client-go/kubernetes/scheme register.go: AddToScheme, and
// meta/v1's unversioned kinds), in a scheme of its own. What the server
// adds to it (internal/apiserver/crd adds the CustomResourceDefinition
// types) changes nothing in client-go's global scheme.Scheme, which the
// program that starts a workshop cluster uses for its own clients.
//
// Adding to Scheme is for init functions only: a running server reads
// it without a lock. Building it costs about 1.4 ms, once per process
// (measured on the 2-core machine, 20 builds).
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	return s
}()

// codecs are the server's encoders and decoders, from Scheme.
var codecs = serializer.NewCodecFactory(Scheme)
