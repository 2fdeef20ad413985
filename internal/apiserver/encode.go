package apiserver

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restwatch "k8s.io/client-go/rest/watch"
)

// The workshop cluster speaks what kube-apiserver speaks to client-go:
// JSON, and protobuf, which client-go's typed clients use by default for
// built-in types (gentype's UseProtobufAsDefaultIfPreferred). Both come
// from the types of client-go's own scheme (codecs, scheme.go), so the
// bytes are the ones a real server would send.

const (
	mediaJSON     = runtime.ContentTypeJSON
	mediaProtobuf = runtime.ContentTypeProtobuf
)

// negotiate picks the response media type from the Accept header, as
// kube-apiserver does: the first supported type, JSON when there is no
// preference. A range asking for another shape is taken when it is one
// the workshop cluster serves (as=PartialObjectMetadata[List], see
// metadata.go; as=Table, see table.go) and skipped otherwise.
func negotiate(r *http.Request) (runtime.SerializerInfo, *transformation, bool) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = mediaJSON
	}
	for _, part := range strings.Split(accept, ",") {
		mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*":
			mediaType = mediaJSON
		}
		supported := codecs.SupportedMediaTypes()
		var as *transformation
		if params["as"] != "" {
			var ok bool
			if as, ok = parseAs(params); !ok {
				continue
			}
			supported = metaCodecs.SupportedMediaTypes()
			if as.kind == asTable && mediaType == mediaProtobuf {
				// A row's object would need a nested encoding in
				// protobuf; kubectl asks for Tables in JSON only.
				continue
			}
		}
		if info, ok := runtime.SerializerInfoForMediaType(supported, mediaType); ok && info.StreamSerializer != nil {
			return info, as, true
		}
	}
	return runtime.SerializerInfo{}, nil, false
}

// encodeObject writes obj in the negotiated media type, with kind and
// apiVersion set. Stored objects are shared, so it encodes a copy.
// With as, it encodes what as turns the object into.
func encodeObject(w io.Writer, info runtime.SerializerInfo, as *transformation, obj runtime.Object, res *Resource) error {
	obj = typed(obj, res)
	if as != nil {
		var err error
		if obj, err = as.transform(obj); err != nil {
			return err
		}
	}
	return info.Serializer.Encode(obj, w)
}

func typed(obj runtime.Object, res *Resource) runtime.Object {
	if _, isStatus := obj.(*metav1.Status); isStatus {
		return obj
	}
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
	return obj
}

// watchEncoder writes watch frames: for JSON one {"type":…,"object":…}
// per line, for protobuf length-prefixed WatchEvent messages. It is
// client-go's own watch encoder, the mirror of the decoder it reads with.
type watchEncoder struct {
	enc *restwatch.Encoder
	res *Resource
	as  *transformation // each object as PartialObjectMetadata or a Table, if asked
}

func newWatchEncoder(w io.Writer, info runtime.SerializerInfo, as *transformation, res *Resource) *watchEncoder {
	framed := info.StreamSerializer.Framer.NewFrameWriter(w)
	return &watchEncoder{
		enc: restwatch.NewEncoder(streaming.NewEncoder(framed, info.StreamSerializer.Serializer), info.Serializer),
		res: res,
		as:  as,
	}
}

func (e *watchEncoder) encode(typ watch.EventType, obj runtime.Object) error {
	obj = typed(obj, e.res)
	if e.as != nil {
		var err error
		if obj, err = e.as.transform(obj); err != nil {
			return err
		}
		// A Table's columns go with the first event only; later
		// events carry "columnDefinitions": null (kube-apiserver's
		// watchEmbeddedEncoder, transcript 58).
		if e.as.table != nil {
			e.as.table.noHeaders = true
		}
	}
	return e.enc.Encode(&watch.Event{Type: typ, Object: obj})
}

// watchContentType is the Content-Type of a watch response.
func watchContentType(info runtime.SerializerInfo) string {
	if info.MediaType == mediaProtobuf {
		return mediaProtobuf + ";stream=watch"
	}
	return info.MediaType
}

// decodeObject reads a request body (JSON, YAML or protobuf) as an object
// of res's kind. Unknown and duplicate fields are checked as the
// fieldValidation parameter asks (see fieldValidation): with Strict they
// are an error, a *strictFieldsError; otherwise they are returned as
// warnings (Warn) or not at all (Ignore).
func decodeObject(body []byte, contentType string, res *Resource, validation string) (runtime.Object, []string, error) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType == "" {
		mediaType = mediaJSON
	}
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil, nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", res.GroupResource(), "",
			fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s", strings.Join(supportedMediaTypes(), ", ")), 0, false)
	}
	decoder := info.Serializer
	if validation != metav1.FieldValidationIgnore && info.StrictSerializer != nil {
		decoder = info.StrictSerializer
	}
	want := res.GroupVersionKind()
	obj, gvk, err := decoder.Decode(body, &want, res.New())
	var warnings []string
	if strict, isStrict := runtime.AsStrictDecodingError(err); isStrict && obj != nil {
		if validation == metav1.FieldValidationStrict {
			return nil, nil, &strictFieldsError{gvk: *gvk, kind: res.Kind, err: err}
		}
		if validation != metav1.FieldValidationIgnore {
			for _, e := range strict.Errors() {
				warnings = append(warnings, e.Error())
			}
		}
		err = nil
	}
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if *gvk != want {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is of kind %s, but %s was expected", gvk, want))
	}
	if res.Hooks != nil && res.Hooks.Decoded != nil {
		// A custom resource: pruned and defaulted as it is read, its
		// pruned fields reported as unknown ones.
		unknown, err := res.Hooks.Decoded(obj)
		if err != nil {
			return nil, nil, err
		}
		if len(unknown) > 0 && validation != metav1.FieldValidationIgnore {
			var errs []error
			for _, path := range unknown {
				errs = append(errs, fmt.Errorf("unknown field %q", path))
			}
			if validation == metav1.FieldValidationStrict {
				return nil, nil, &strictFieldsError{gvk: *gvk, kind: res.Kind, err: runtime.NewStrictDecodingError(errs)}
			}
			for _, e := range errs {
				warnings = append(warnings, e.Error())
			}
		}
	}
	clearTypeMeta(obj)
	return obj, warnings, nil
}

// fieldValidation is a write's fieldValidation parameter: Strict refuses
// unknown or duplicate fields, Warn (kube-apiserver's default) lets them
// through with a Warning header, Ignore says nothing. kubectl apply
// asks for Strict once the server's OpenAPI document offers the
// parameter (openapi.go).
func fieldValidation(r *http.Request) string {
	if v := r.URL.Query().Get("fieldValidation"); v != "" {
		return v
	}
	return metav1.FieldValidationWarn
}

// strictFieldsError is a strict decoding error under
// fieldValidation=Strict. kube-apiserver words it differently for a
// body (create, update) and for a patched object.
type strictFieldsError struct {
	gvk  schema.GroupVersionKind
	kind string
	err  error // "strict decoding error: unknown field \"spec.replicaz\""
}

func (e *strictFieldsError) Error() string { return e.err.Error() }

// forBody is kube-apiserver's transformDecodeError for a create or update.
func (e *strictFieldsError) forBody() error {
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", e.gvk.Kind, e.gvk.Version, e.kind, e.err))
}

// forPatch is its answer for a patch whose result has unknown fields.
func (e *strictFieldsError) forPatch() error { return apierrors.NewBadRequest(e.err.Error()) }

// warn adds kube-apiserver's Warning headers, one per field.
func warn(w http.ResponseWriter, warnings []string) {
	for _, text := range warnings {
		w.Header().Add("Warning", "299 - "+strconv.Quote(text))
	}
}

func supportedMediaTypes() []string {
	var out []string
	for _, info := range codecs.SupportedMediaTypes() {
		out = append(out, info.MediaType)
	}
	return out
}
