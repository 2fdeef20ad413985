package apiserver

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	tablevalidation "k8s.io/apimachinery/pkg/apis/meta/v1beta1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Table answers: what kubectl get asks for.
//
//	Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json
//
// kube-apiserver answers with a meta.k8s.io Table: the columns kubectl
// prints, computed on the server (recorded transcripts 52-58). The
// columns and cells of each kind come from kube-apiserver's printers,
// k8s.io/kubernetes/pkg/printers/internalversion/printers.go (AddHandlers
// for the column definitions, <kind>ColumnDefinitions; print<Kind> for
// the cells), which this package cannot import; they are written out in
// each group's registry_<group>.go, beside the kind's strategy (podTable
// in registry_core_pods.go, jobTable in registry_batch.go...), each rule
// beside the upstream function it copies; the kinds whose registry has no
// printer get the default TableConvertor's Name and Created At
// (defaultConvertorTable). Upstream prints from the internal types; the
// v1 types have the same fields (pointers where the v1 type has them: a
// nil replicas count reads 0, as the internal type, defaulted, never has
// one). The server always prints wide, so every column's cell is filled;
// kubectl hides priority-1 columns unless -o wide. This file holds what
// the printers share: the table around them, kube-apiserver's asTable and
// TableConvertor (apiserver/pkg/endpoints/handlers/response.go,
// kubernetes/pkg/printers/storage), and the helpers of several printers.

// tablePrinter is one kind's columns and how to fill a row.
type tablePrinter struct {
	columns []metav1.TableColumnDefinition
	// cells returns a row's cells, the wide ones included: the server
	// always prints wide (printers.GenerateOptions{Wide: true}) and
	// kubectl hides priority-1 columns unless -o wide. age formats a
	// timestamp relative to the server's clock.
	cells func(obj runtime.Object, age func(metav1.Time) string) []any
	// listCells, if set, fills a list's rows where one row depends on
	// the others (a StorageClass list marks its default).
	listCells func(items []runtime.Object, age func(metav1.Time) string) [][]any
}

// tableOptions are a Table request's own parameters (metav1.TableOptions)
// and what the server needs to fill the table.
type tableOptions struct {
	include   metav1.IncludeObjectPolicy // includeObject: the row's object
	noHeaders bool                       // leave out columnDefinitions (watch events after the first)
	now       func() metav1.Time         // the server's clock, for Age
}

// parseTableOptions reads includeObject as kube-apiserver does
// (optionsForTransform): apimachinery's parameter codec, then its
// validation, a bad value being a 400.
func parseTableOptions(q url.Values, now func() metav1.Time) (*tableOptions, error) {
	opts := &metav1.TableOptions{}
	if err := metainternalscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	switch errs := tablevalidation.ValidateTableOptions(opts); len(errs) {
	case 0:
	case 1:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs[0].Error()))
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs))
	}
	return &tableOptions{include: opts.IncludeObject, now: now}, nil
}

// toTable turns an object or a list into a Table (kube-apiserver's
// TableConvertor, then asTable): one row per object, the list's
// resourceVersion and continue token, and each row's object as
// PartialObjectMetadata unless includeObject says otherwise. obj carries
// its kind and apiVersion (see typed).
func (as *transformation) toTable(obj runtime.Object) (runtime.Object, error) {
	p := as.res.Table
	if p == nil {
		return nil, notAcceptable(fmt.Sprintf("the resource %s does not support being converted to a Table", as.res))
	}
	opts := as.table
	now := opts.now()
	age := func(t metav1.Time) string { return translateTimestampSince(t, now) }
	table := &metav1.Table{}
	if !opts.noHeaders {
		table.ColumnDefinitions = p.columns
	}
	var items []runtime.Object
	if li, ok := obj.(metav1.ListInterface); ok {
		table.ResourceVersion = li.GetResourceVersion()
		table.Continue = li.GetContinue()
		table.RemainingItemCount = li.GetRemainingItemCount()
		if err := meta.EachListItem(obj, func(o runtime.Object) error {
			items = append(items, typed(o, as.res))
			return nil
		}); err != nil {
			return nil, err
		}
	} else {
		table.ResourceVersion = metaOf(obj).GetResourceVersion()
		items = []runtime.Object{obj}
	}
	var cells [][]any
	if _, list := obj.(metav1.ListInterface); list && p.listCells != nil {
		cells = p.listCells(items, age)
	}
	table.Rows = make([]metav1.TableRow, 0, len(items))
	for i, item := range items {
		row := metav1.TableRow{}
		if cells != nil {
			row.Cells = cells[i]
		} else {
			row.Cells = p.cells(item, age)
		}
		if pod, ok := item.(*corev1.Pod); ok {
			row.Conditions = podRowConditions(pod)
		}
		switch opts.include {
		case metav1.IncludeObject:
			row.Object.Object = item
		case metav1.IncludeMetadata, "":
			partial := meta.AsPartialObjectMetadata(metaOf(item))
			partial.GetObjectKind().SetGroupVersionKind(as.gv.WithKind("PartialObjectMetadata"))
			row.Object.Object = partial
		case metav1.IncludeNone:
		}
		table.Rows = append(table.Rows, row)
	}
	table.GetObjectKind().SetGroupVersionKind(as.gv.WithKind("Table"))
	return table, nil
}

// translateTimestampSince is the Age cell (printers.go
// translateTimestampSince), relative to the server's clock rather than
// time.Since, so that a fixed clock gives a fixed age.
func translateTimestampSince(ts metav1.Time, now metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

// The descriptions of the columns that describe a field are the field's
// own documentation, as upstream takes them from SwaggerDoc(); the others
// are upstream's literal text (transcripts 52-56).
var (
	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]}
	ageColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}
)

// defaultConvertorTable is kube-apiserver's default TableConvertor
// (k8s.io/apiserver pkg/registry/rest/table.go,
// defaultTableConvertor.ConvertToTable), which the registries of the
// kinds without a printer use (limitranges, roles, clusterroles): Name,
// and Created At as an RFC 3339 time in UTC, of type date.
var defaultConvertorTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	cells: func(obj runtime.Object, _ func(metav1.Time) string) []any {
		m := metaOf(obj)
		return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}
	},
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// containerCells is printers.go layoutContainerCells: names and images,
// comma-separated.
func containerCells(containers []corev1.Container) (names, images string) {
	var n, i []string
	for _, c := range containers {
		n, i = append(n, c.Name), append(i, c.Image)
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// containersColumns are the Containers and Images columns of the kinds
// with a pod template, priority 1.
var containersColumns = []metav1.TableColumnDefinition{
	{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
	{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
}

func columns(cols ...any) []metav1.TableColumnDefinition {
	var out []metav1.TableColumnDefinition
	for _, c := range cols {
		switch c := c.(type) {
		case metav1.TableColumnDefinition:
			out = append(out, c)
		case []metav1.TableColumnDefinition:
			out = append(out, c...)
		}
	}
	return out
}

func replicas(p *int32) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// sortedSet is sets.NewString(...).List() joined: the non-empty values,
// sorted, without duplicates.
func sortedSet(vs []string) string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ",")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// listWithMore is listWithMoreString: the first three, then how many
// more; <unset> for none.
func listWithMore(list []string) string {
	const max = 3
	if len(list) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ","), len(list)-max)
	}
	if len(list) == 0 {
		return "<unset>"
	}
	return strings.Join(list, ",")
}
