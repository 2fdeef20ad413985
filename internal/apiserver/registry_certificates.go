package apiserver

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// certificates.k8s.io/v1 (kubernetes pkg/registry/certificates): a
// CertificateSigningRequest's strategy (csrStrategy, below), its
// validation, its approval subresource and its printer.
var certificatesStrategies = map[schema.GroupResource]strategy{
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: csrStrategy,
}

// CertificateSigningRequests (certificates.k8s.io/v1), as kube-apiserver
// v1.37.2 stores them: kubernetes pkg/registry/certificates/certificates
// (strategy.go: the main, status and approval strategies; storage: the
// three REST endpoints on one store) and their validation,
// pkg/apis/certificates/validation/validation.go.
//
// There is no signer: no controller approves, signs or cleans up a
// request here (kube-controller-manager's csrapproving, csrsigning and
// csrcleaner controllers do on a real cluster). A request's
// status.certificate is set only by a write to its status subresource,
// as a signer would write it; its Approved or Denied condition only by
// a write to its approval subresource, as kubectl certificate approve
// does. And as the workshop cluster authenticates no one, a request's
// spec.username, uid, groups and extra (kube-apiserver's requesting
// user) are left empty.
var csrStrategy = strategy{
	ShortNames: []string{"csr"}, Table: csrTable, ResetStatusOnCreate: true,
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"spec.signerName": obj.(*certificatesv1.CertificateSigningRequest).Spec.SignerName}
	},
	FieldLabel: fieldLabels("metadata.name", "spec.signerName"),
	// GetResetFields of the three strategies.
	ResetFields: func(subresource string) []fieldpath.Path {
		switch subresource {
		case "status":
			return []fieldpath.Path{fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("status", "conditions")}
		case "approval":
			return []fieldpath.Path{fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("status", "certificate")}
		}
		return []fieldpath.Path{fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("status")}
	},
	// PrepareForCreate: the requesting user's fields are the server's to
	// write; with no user, none.
	PrepareForCreate: func(obj runtime.Object, _ metav1.Time) {
		spec := &obj.(*certificatesv1.CertificateSigningRequest).Spec
		spec.Username, spec.UID, spec.Groups, spec.Extra = "", "", nil, nil
	},
	Validate: func(obj runtime.Object) field.ErrorList {
		csr := obj.(*certificatesv1.CertificateSigningRequest)
		return append(validateCSR(csr, csrOptions(nil, nil)), approvedAndDenied(csr, csrOptions(nil, nil))...)
	},
	// csrStrategy.PrepareForUpdate: the object is immutable but for its
	// metadata (its status is the status subresource's, kept by the
	// generic store).
	PrepareForUpdate: func(next, old runtime.Object) {
		next.(*certificatesv1.CertificateSigningRequest).Spec = old.(*certificatesv1.CertificateSigningRequest).Spec
	},
	ValidateUpdate: func(next, old runtime.Object, subresource string) field.ErrorList {
		n, o := next.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
		opts := csrOptions(n, o)
		switch subresource {
		case "status":
			opts.allowSettingCertificate = true
		case "approval":
			opts.allowSettingApprovalConditions = true
		}
		return validateCSRUpdate(n, o, opts)
	},
	// csrStatusStrategy.PrepareForUpdate: the spec is kept (by the
	// generic store), the Approved and Denied conditions are the old
	// ones where as many are sent (a signer cannot change them; adding
	// or removing one fails validation), and the conditions get their
	// times.
	PrepareStatusUpdate: func(next, old runtime.Object, now metav1.Time) {
		n, o := next.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
		preserveConditions(n, o, certificatesv1.CertificateApproved)
		preserveConditions(n, o, certificatesv1.CertificateDenied)
		conditionTimes(n, o, now)
	},
	// csrApprovalStrategy.PrepareForUpdate: only the conditions are
	// written (with their times), and the metadata.
	Approval: func(next, old runtime.Object, now metav1.Time) {
		n, o := next.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
		conditionTimes(n, o, now)
		conditions := n.Status.Conditions
		n.Spec = o.Spec
		n.Status = *o.Status.DeepCopy()
		n.Status.Conditions = conditions
	},
}

// preserveConditions is preserveConditionInstances: the instances of
// type t in next are replaced by old's, if there are as many.
func preserveConditions(next, old *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	oldIdx, newIdx := conditionIndices(old, t), conditionIndices(next, t)
	if len(oldIdx) != len(newIdx) {
		return
	}
	for i, j := range oldIdx {
		next.Status.Conditions[newIdx[i]] = old.Status.Conditions[j]
	}
}

func conditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// conditionTimes is populateConditionTimestamps: a condition with no
// lastUpdateTime gets now; one with no lastTransitionTime gets the old
// condition's of the same type and status, else now.
func conditionTimes(next, old *certificatesv1.CertificateSigningRequest, now metav1.Time) {
	for i := range next.Status.Conditions {
		c := &next.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, oc := range old.Status.Conditions {
			if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
				c.LastTransitionTime = oc.LastTransitionTime
				break
			}
		}
	}
}

// csrValidationOptions is certificateValidationOptions: what one write
// may do, and what it tolerates because the stored object already has it.
type csrValidationOptions struct {
	allowSettingApprovalConditions, allowSettingCertificate             bool
	allowBothApprovedAndDenied, allowLegacySignerName                   bool
	allowDuplicateConditionTypes, allowEmptyConditionType               bool
	allowArbitraryCertificate, allowUnknownUsages, allowDuplicateUsages bool
}

// csrOptions is getValidationOptions; old is nil on create.
func csrOptions(next, old *certificatesv1.CertificateSigningRequest) csrValidationOptions {
	if old == nil {
		return csrValidationOptions{}
	}
	has := func(t certificatesv1.RequestConditionType) bool { return len(conditionIndices(old, t)) > 0 }
	seen := map[certificatesv1.RequestConditionType]bool{}
	var duplicate, empty bool
	for _, c := range old.Status.Conditions {
		duplicate = duplicate || seen[c.Type]
		empty = empty || c.Type == ""
		seen[c.Type] = true
	}
	seenUsage := map[certificatesv1.KeyUsage]bool{}
	var unknownUsage, duplicateUsage bool
	for _, u := range old.Spec.Usages {
		unknownUsage = unknownUsage || !csrUsages[u]
		duplicateUsage = duplicateUsage || seenUsage[u]
		seenUsage[u] = true
	}
	return csrValidationOptions{
		allowBothApprovedAndDenied:   has(certificatesv1.CertificateApproved) && has(certificatesv1.CertificateDenied),
		allowLegacySignerName:        old.Spec.SignerName == legacyUnknownSignerName,
		allowDuplicateConditionTypes: duplicate,
		allowEmptyConditionType:      empty,
		allowArbitraryCertificate: (next != nil && bytes.Equal(next.Status.Certificate, old.Status.Certificate)) ||
			validateCertificate(old.Status.Certificate) != nil,
		allowUnknownUsages:   unknownUsage,
		allowDuplicateUsages: duplicateUsage,
	}
}

const legacyUnknownSignerName = "kubernetes.io/legacy-unknown"

// csrUsages are allValidUsages.
var csrUsages = func() map[certificatesv1.KeyUsage]bool {
	m := map[certificatesv1.KeyUsage]bool{}
	for _, u := range csrUsageList {
		m[certificatesv1.KeyUsage(u)] = true
	}
	return m
}()

// csrUsageList is allValidUsages in order (sets.String's List sorts).
var csrUsageList = []string{
	"any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment",
	"decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel",
	"ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime",
	"server auth", "signing", "timestamping",
}

// validateCSR is validateCertificateSigningRequest, but for the object
// metadata's rules (the store checks the name).
func validateCSR(csr *certificatesv1.CertificateSigningRequest, opts csrValidationOptions) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if err := checkCSRRequest(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), csr.Spec.Request, err.Error()))
	}
	if len(csr.Spec.Usages) == 0 {
		errs = append(errs, field.Required(spec.Child("usages"), ""))
	}
	if !opts.allowUnknownUsages {
		for i, u := range csr.Spec.Usages {
			if !csrUsages[u] {
				errs = append(errs, field.NotSupported(spec.Child("usages").Index(i), u, csrUsageList))
			}
		}
	}
	if !opts.allowDuplicateUsages {
		seen := map[certificatesv1.KeyUsage]bool{}
		for i, u := range csr.Spec.Usages {
			if seen[u] {
				errs = append(errs, field.Duplicate(spec.Child("usages").Index(i), u))
			}
			seen[u] = true
		}
	}
	if !opts.allowLegacySignerName && csr.Spec.SignerName == legacyUnknownSignerName {
		errs = append(errs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, validateSignerName(spec.Child("signerName"), csr.Spec.SignerName)...)
	}
	if s := csr.Spec.ExpirationSeconds; s != nil && *s < 600 {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateCSRConditions(field.NewPath("status", "conditions"), csr, opts)...)
	if !opts.allowArbitraryCertificate {
		if err := validateCertificate(csr.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return errs
}

// checkCSRRequest is validateCSR (certificates.ParseCSR and the
// signature check): a PEM CERTIFICATE REQUEST signed by its own key.
func checkCSRRequest(pemBytes []byte) error {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	return req.CheckSignature()
}

// validateCertificate is the validation's validateCertificate: empty,
// or CERTIFICATE PEM blocks only, each holding certificates.
func validateCertificate(pemData []byte) error {
	if len(pemData) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(pemData)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		pemData = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// validateSignerName is core validation's ValidateSignerName
// (pkg/apis/core/validation/names.go).
func validateSignerName(path *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	segments := strings.Split(name, "/")
	if len(segments) != 2 {
		return field.ErrorList{field.Invalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	if len(segments[0]) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, field.TooLong(path, "", validation.DNS1123SubdomainMaxLength))
	}
	domain := strings.Split(segments[0], ".")
	for _, l := range domain {
		if msgs := validation.IsDNS1123Label(l); len(msgs) > 0 {
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(path, segments[0], fmt.Sprintf("validating label %q: %s", l, msg)))
			}
			break
		}
	}
	if len(domain) < 2 {
		errs = append(errs, field.Invalid(path, segments[0], "should be a domain with at least two segments separated by dots"))
	}
	for _, l := range strings.Split(segments[1], ".") {
		if msgs := validation.IsDNS1123Subdomain(l); len(msgs) > 0 {
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(path, segments[1], fmt.Sprintf("validating label %q: %s", l, msg)))
			}
			break
		}
	}
	return errs
}

// validateCSRConditions is validateConditions: a type, a status (True
// only for Approved, Denied and Failed), no type twice (not both
// Approved and Denied: approvedAndDenied).
func validateCSRConditions(path *field.Path, csr *certificatesv1.CertificateSigningRequest, opts csrValidationOptions) field.ErrorList {
	var errs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	for i, c := range csr.Status.Conditions {
		if !opts.allowEmptyConditionType && c.Type == "" {
			errs = append(errs, field.Required(path.Index(i).Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		switch c.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			allowed = []string{string(corev1.ConditionTrue)}
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(path.Index(i).Child("status"), ""))
		case !containsString(allowed, string(c.Status)):
			errs = append(errs, field.NotSupported(path.Index(i).Child("status"), c.Status, allowed))
		}
		if !opts.allowDuplicateConditionTypes {
			if seen[c.Type] {
				errs = append(errs, field.Duplicate(path.Index(i).Child("type"), c.Type))
			}
			seen[c.Type] = true
		}
	}
	return errs
}

// approvedAndDenied is the declarative validation's zeroOrOneOf rule on
// status.conditions (k8s.io/api certificates/v1 types.go), which
// kube-apiserver v1.37.2 answers in place of the handwritten "mutually
// exclusive" error it covers, after the others: one error, worded as
// its union validation words it.
func approvedAndDenied(csr *certificatesv1.CertificateSigningRequest, opts csrValidationOptions) field.ErrorList {
	if opts.allowBothApprovedAndDenied ||
		len(conditionIndices(csr, certificatesv1.CertificateApproved)) == 0 || len(conditionIndices(csr, certificatesv1.CertificateDenied)) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("status", "conditions"),
		`{conditions[{"type": "Approved"}], conditions[{"type": "Denied"}]}`,
		"must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`")}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// validateCSRUpdate is validateCertificateSigningRequestUpdate: the
// object's own rules, then what the write may change. Approved, Denied
// and Failed conditions are never removed; Approved and Denied change
// only through approval; status.certificate is set only through status,
// and once.
func validateCSRUpdate(next, old *certificatesv1.CertificateSigningRequest, opts csrValidationOptions) field.ErrorList {
	errs := validateCSR(next, opts)
	conditions := field.NewPath("status", "conditions")
	find := func(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
		var out []certificatesv1.CertificateSigningRequestCondition
		for _, i := range conditionIndices(csr, t) {
			out = append(out, csr.Status.Conditions[i])
		}
		return out
	}
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(find(next, t)) < len(find(old, t)) {
			errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !opts.allowSettingApprovalConditions {
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			o, n := find(old, t), find(next, t)
			switch {
			case len(n) < len(o):
			case len(n) > len(o):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !apiequality.Semantic.DeepEqual(o, n):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not modify a condition of type %q\n%v", t, diff.Diff(o, n))))
			}
		}
	}
	if !bytes.Equal(next.Status.Certificate, old.Status.Certificate) {
		if !opts.allowSettingCertificate {
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not set certificate content"))
		} else if len(old.Status.Certificate) > 0 {
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
		}
	}
	return append(errs, approvedAndDenied(next, opts)...)
}

// csrTable: certificateSigningRequestColumnDefinitions (their
// descriptions from v1beta1's documentation, as upstream takes them) and
// printCertificateSigningRequest with extractCSRStatus. Requestor is
// spec.username, empty here (no one is authenticated).
var csrTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		ageColumn,
		{Name: "SignerName", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["signerName"]},
		{Name: "Requestor", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["request"]},
		{Name: "RequestedDuration", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["expirationSeconds"]},
		{Name: "Condition", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]},
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		csr := obj.(*certificatesv1.CertificateSigningRequest)
		signer := "<none>"
		if csr.Spec.SignerName != "" {
			signer = csr.Spec.SignerName
		}
		requested := "<none>"
		if s := csr.Spec.ExpirationSeconds; s != nil {
			requested = duration.HumanDuration(time.Duration(*s) * time.Second)
		}
		var approved, denied, failed bool
		for _, c := range csr.Status.Conditions {
			switch c.Type {
			case certificatesv1.CertificateApproved:
				approved = true
			case certificatesv1.CertificateDenied:
				denied = true
			case certificatesv1.CertificateFailed:
				failed = true
			}
		}
		status := "Pending"
		if denied {
			status = "Denied"
		} else if approved {
			status = "Approved"
		}
		if failed {
			status += ",Failed"
		}
		if len(csr.Status.Certificate) > 0 {
			status += ",Issued"
		}
		return []any{csr.Name, age(csr.CreationTimestamp), signer, csr.Spec.Username, requested, status}
	},
}
