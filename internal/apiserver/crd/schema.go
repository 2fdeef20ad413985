package crd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	schemavalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
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
	cel        *cel.Validator // nil: no x-kubernetes-validations
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
	// NewStrategy: the rules are compiled once, with kube-apiserver's
	// per-call cost limit.
	s.cel = cel.NewValidator(s.structural, true, celconfig.PerCallLimit)
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

// validate is apiextensions-apiserver's customResourceStrategy Validate
// and ValidateUpdate, and its statusStrategy ValidateUpdate
// (pkg/registry/customresource/strategy.go, status_strategy.go): the
// openAPIV3Schema validation (pkg/apiserver/validation), embedded
// resources' metadata (schema/objectmeta), list-type invariants
// (schema/listtype), the scale checks copied below, then the CEL rules
// of x-kubernetes-validations (schema/cel) with the cost budget
// kube-apiserver gives one object. On update, unchanged fields that
// were already invalid are let through (ratcheting: CRDValidationRatcheting
// is GA and locked on in v0.37.2, pkg/features/kube_features.go), by
// the same correlated old and new objects upstream builds.
func (s *crSchema) validate(statusSubresource bool, scale *apiextensionsv1.CustomResourceSubresourceScale) func(obj, old runtime.Object, subresource string) field.ErrorList {
	return func(obj, old runtime.Object, subresource string) field.ErrorList {
		if s.validator == nil {
			return nil
		}
		ctx := context.Background()
		u := obj.(*unstructured.Unstructured).DeepCopy()
		u.SetGroupVersionKind(s.gvk)
		var o *unstructured.Unstructured
		var options []schemavalidation.ValidationOption
		var celOptions []cel.Option
		if old != nil {
			o = old.(*unstructured.Unstructured).DeepCopy()
			o.SetGroupVersionKind(s.gvk)
			correlated := common.NewCorrelatedObject(u.Object, o.Object, &model.Structural{Structural: s.structural})
			if subresource == "status" {
				options = append(options, schemavalidation.WithRatcheting(correlated.Key("status")))
			} else {
				options = append(options, schemavalidation.WithRatcheting(correlated))
			}
			celOptions = append(celOptions, cel.WithRatcheting(correlated))
		}
		var errs field.ErrorList
		switch {
		case subresource == "status":
			if status, ok := u.Object["status"]; ok && s.status != nil {
				errs = append(errs, schemavalidation.ValidateCustomResourceUpdate(field.NewPath("status"), status, o.Object["status"], s.status, options...)...)
			}
			errs = append(errs, validateScaleStatus(u, scale)...)
			if newErrs := listtype.ValidateListSetsAndMaps(nil, s.structural, u.Object); len(newErrs) > 0 {
				if oldErrs := listtype.ValidateListSetsAndMaps(nil, s.structural, o.Object); len(oldErrs) == 0 {
					errs = append(errs, newErrs...)
				}
			}
		case o == nil:
			errs = append(errs, schemavalidation.ValidateCustomResource(nil, u.Object, s.validator)...)
			errs = append(errs, validateScaleSpec(u, scale)...)
			errs = append(errs, validateScaleStatus(u, scale)...)
			errs = append(errs, objectmeta.Validate(ctx, nil, u.Object, s.structural, false)...)
			errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, u.Object)...)
		default:
			errs = append(errs, schemavalidation.ValidateCustomResourceUpdate(nil, u.Object, o.Object, s.validator, options...)...)
			errs = append(errs, validateScaleSpec(u, scale)...)
			errs = append(errs, validateScaleStatus(u, scale)...)
			errs = append(errs, objectmeta.Validate(ctx, nil, u.Object, s.structural, false)...)
			if oldErrs := listtype.ValidateListSetsAndMaps(nil, s.structural, o.Object); len(oldErrs) == 0 {
				errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, u.Object)...)
			}
		}
		if s.cel != nil {
			if blocking, err := hasBlockingErr(errs); blocking {
				errs = append(errs, err)
			} else {
				var oldObject any
				if o != nil {
					oldObject = o.Object
				}
				celErrs, _ := s.cel.Validate(ctx, nil, s.structural, u.Object, oldObject, celconfig.RuntimeCELCostBudget, celOptions...)
				errs = append(errs, celErrs...)
			}
		}
		return errs
	}
}

// hasBlockingErr is strategy.go's: errors after which the CEL rules are
// not run, as their inputs may not have the schema's types.
func hasBlockingErr(errs field.ErrorList) (bool, *field.Error) {
	for _, err := range errs {
		if err.Type == field.ErrorTypeNotSupported || err.Type == field.ErrorTypeRequired || err.Type == field.ErrorTypeTooLong || err.Type == field.ErrorTypeTooMany || err.Type == field.ErrorTypeTypeInvalid {
			return true, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return false, nil
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
