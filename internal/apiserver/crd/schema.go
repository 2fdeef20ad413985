package crd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	schemavalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
)

// crSchema is one served version's schema, as apiextensions-apiserver's
// crdHandler builds it for the version (getOrCreateServingInfoFor):
// the structural schema, and validators of the object and of its status.
type crSchema struct {
	gvk        schema.GroupVersionKind
	structural *structuralschema.Structural // nil: no schema (x-kubernetes-preserve-unknown-fields everywhere)
	validator  schemavalidation.SchemaValidator
	status     schemavalidation.SchemaValidator
}

func newSchema(gvk schema.GroupVersionKind, v apiextensionsv1.CustomResourceDefinitionVersion) (*crSchema, error) {
	s := &crSchema{gvk: gvk}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return s, nil // the CRD's validation has refused this in v1
	}
	internal := &apiextensionsinternal.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
		return nil, err
	}
	var err error
	if s.structural, err = structuralschema.NewStructural(internal); err != nil {
		return nil, err
	}
	if s.validator, _, err = schemavalidation.NewSchemaValidator(internal); err != nil {
		return nil, err
	}
	if status, ok := internal.Properties["status"]; ok {
		if s.status, _, err = schemavalidation.NewSchemaValidator(&status); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// decoded prunes and defaults an object as it is read, as
// apiextensions-apiserver's codec for the version does (its
// unstructuredDefaulter, then schemaCoercingConverter's pruning), and
// returns the pruned fields' paths ("spec.unknownField", transcript 84).
func (s *crSchema) decoded(obj runtime.Object) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("expected a custom resource, got %T", obj)
	}
	if s.structural == nil {
		return nil, nil
	}
	defaulting.Default(u.Object, s.structural)
	return pruning.PruneWithOptions(u.Object, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}), nil
}

// Default is the defaulter the field manager runs on an applied object.
func (s *crSchema) Default(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok && s.structural != nil {
		defaulting.Default(u.Object, s.structural)
	}
}

// validator is apiextensions-apiserver's customResourceValidator
// (pkg/registry/customresource/validator.go): Validate, ValidateUpdate
// and ValidateStatusUpdate, with its schema validation from
// pkg/apiserver/validation and its scale checks copied below.
func (s *crSchema) validate(statusSubresource bool, scale *apiextensionsv1.CustomResourceSubresourceScale) func(obj, old runtime.Object, subresource string) field.ErrorList {
	return func(obj, old runtime.Object, subresource string) field.ErrorList {
		u := obj.(*unstructured.Unstructured).DeepCopy()
		u.SetGroupVersionKind(s.gvk)
		var errs field.ErrorList
		if s.validator == nil {
			return nil
		}
		switch {
		case subresource == "status":
			if status, ok := u.Object["status"]; ok && s.status != nil {
				errs = append(errs, schemavalidation.ValidateCustomResourceUpdate(field.NewPath("status"), status, old.(*unstructured.Unstructured).Object["status"], s.status)...)
			}
			return append(errs, validateScaleStatus(u, scale)...)
		case old == nil:
			errs = append(errs, schemavalidation.ValidateCustomResource(nil, u.Object, s.validator)...)
		default:
			o := old.(*unstructured.Unstructured).DeepCopy()
			o.SetGroupVersionKind(s.gvk)
			errs = append(errs, schemavalidation.ValidateCustomResourceUpdate(nil, u.Object, o.Object, s.validator)...)
		}
		errs = append(errs, validateScaleSpec(u, scale)...)
		return append(errs, validateScaleStatus(u, scale)...)
	}
}

// validateScaleSpec is customResourceValidator.ValidateScaleSpec: the
// field path is the CRD's specReplicasPath as written (".spec.replicas",
// transcript 85).
func validateScaleSpec(u *unstructured.Unstructured, scale *apiextensionsv1.CustomResourceSubresourceScale) field.ErrorList {
	if scale == nil {
		return nil
	}
	return validateReplicas(u, scale.SpecReplicasPath)
}

// validateScaleStatus is customResourceValidator.ValidateScaleStatus (the
// label selector's check left out).
func validateScaleStatus(u *unstructured.Unstructured, scale *apiextensionsv1.CustomResourceSubresourceScale) field.ErrorList {
	if scale == nil {
		return nil
	}
	return validateReplicas(u, scale.StatusReplicasPath)
}

func validateReplicas(u *unstructured.Unstructured, path string) field.ErrorList {
	replicas, _, err := unstructured.NestedInt64(u.Object, splitPath(path)...)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, err.Error())}
	case replicas < 0:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, "should be a non-negative integer")}
	case replicas > math.MaxInt32:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

// fieldManagerFor makes a kind's FieldManager per subresource, with the
// strategy's reset fields (GetResetFields: a write of the main resource
// does not own what the server resets, e.g. status; a status write owns
// only status). A custom resource's type converter is apimachinery's
// deduced one, which reads the object's own shape (kube-apiserver builds
// one from the CRD's schema: lists are atomic here, whatever their
// x-kubernetes-list-type).
func fieldManagerFor(converter managedfields.TypeConverter, gvk schema.GroupVersionKind, convertor runtime.ObjectConvertor, defaulter runtime.ObjectDefaulter, creater runtime.ObjectCreater, mainReset ...string) func(subresource string) (*managedfields.FieldManager, error) {
	return func(subresource string) (*managedfields.FieldManager, error) {
		reset := fieldpath.NewSet()
		if subresource == "status" {
			reset.Insert(fieldpath.MakePathOrDie("spec"))
			if gvk.Group != apiextensionsv1.GroupName {
				reset.Insert(fieldpath.MakePathOrDie("metadata"))
			}
		} else {
			for _, f := range mainReset {
				reset.Insert(fieldpath.MakePathOrDie(f))
			}
		}
		resetFields := map[fieldpath.APIVersion]fieldpath.Filter{fieldpath.APIVersion(gvk.GroupVersion().String()): fieldpath.NewExcludeSetFilter(reset)}
		return managedfields.NewDefaultFieldManager(converter, convertor, defaulter, creater, gvk, gvk.GroupVersion(), subresource, resetFields)
	}
}

// table is apiextensions-apiserver's tableconvertor.New
// (pkg/registry/customresource/tableconvertor): Name, then the CRD's
// additionalPrinterColumns, each cell the first value its JSONPath finds
// (cellForJSONValue); a date is an age on the server's clock.
func table(columns []apiextensionsv1.CustomResourceColumnDefinition) ([]metav1.TableColumnDefinition, func(runtime.Object, func(metav1.Time) string) []any, error) {
	if len(columns) == 0 {
		// crdHandler's serveDefaultColumnsIfEmpty.
		columns = []apiextensionsv1.CustomResourceColumnDefinition{{
			Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
			Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"],
		}}
	}
	defs := []metav1.TableColumnDefinition{apiserver.NameColumn()}
	var paths []*jsonpath.JSONPath
	for _, col := range columns {
		p := jsonpath.New(col.Name)
		if err := p.Parse(fmt.Sprintf("{%s}", col.JSONPath)); err != nil {
			return nil, nil, fmt.Errorf("unrecognized column definition %q", col.JSONPath)
		}
		p.AllowMissingKeys(true)
		desc := fmt.Sprintf("Custom resource definition column (in JSONPath format): %s", col.JSONPath)
		if col.Description != "" {
			desc = col.Description
		}
		paths = append(paths, p)
		defs = append(defs, metav1.TableColumnDefinition{Name: col.Name, Type: col.Type, Format: col.Format, Description: desc, Priority: col.Priority})
	}
	return defs, func(obj runtime.Object, age func(metav1.Time) string) []any {
		u := obj.(*unstructured.Unstructured)
		cells := []any{u.GetName()}
		var buf bytes.Buffer
		for i, p := range paths {
			results, err := p.FindResults(u.Object)
			if err != nil || len(results) == 0 || len(results[0]) == 0 {
				cells = append(cells, nil)
				continue
			}
			value := results[0][0].Interface()
			if defs[i+1].Type == "string" {
				if err := p.PrintResults(&buf, []reflect.Value{reflect.ValueOf(value)}); err == nil {
					cells = append(cells, buf.String())
					buf.Reset()
				} else {
					cells = append(cells, nil)
				}
				continue
			}
			cells = append(cells, cellFor(defs[i+1].Type, value, age))
		}
		return cells
	}, nil
}

// cellFor is tableconvertor's cellForJSONValue.
func cellFor(typ string, value any, age func(metav1.Time) string) any {
	switch typ {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "date":
		if s, ok := value.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return age(t)
		}
	}
	return nil
}
