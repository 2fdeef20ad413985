package apiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// testCSR is a request for a key of its own, PEM-encoded, and a
// self-signed certificate as a signer would issue.
func testCSR(t *testing.T) (request, certificate []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0)}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert})
}

// TestCertificateSigningRequests: a CSR is stored as kube-apiserver
// v1.37.2 stores it (pkg/registry/certificates/certificates/strategy.go),
// checked on a real v1.37.2: a create drops the status and the
// requesting user's fields it sends and records no managedFields (the
// strategy's reset fields are spec and status); a PUT of the object
// keeps spec and status; approval writes the conditions (with their
// times) and the metadata, not the certificate; status writes the
// certificate but may not add an Approved or Denied condition; the
// validation's 422s.
func TestCertificateSigningRequests(t *testing.T) {
	s := startServer(t)
	client := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	csrs := client.CertificatesV1().CertificateSigningRequests()
	request, certificate := testCSR(t)
	created, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: "org.io/my-signer", Request: request, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
			Username: "bob",
		},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Username != "" || len(created.Status.Conditions) != 0 || len(created.ManagedFields) != 0 {
		t.Errorf("created: username %q, conditions %v, managedFields %v", created.Spec.Username, created.Status.Conditions, created.ManagedFields)
	}

	// Approval: the conditions and the labels are written, the
	// certificate and the spec are not.
	approve := created.DeepCopy()
	approve.Labels = map[string]string{"x": "y"}
	approve.Spec.SignerName = "a.b/c"
	approve.Status.Certificate = certificate
	approve.Status.Conditions = append(approve.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "R",
	})
	approved, err := csrs.UpdateApproval(ctx, "csr-1", approve, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := approved.Status.Conditions
	if approved.Labels["x"] != "y" || approved.Spec.SignerName != "org.io/my-signer" || len(approved.Status.Certificate) != 0 ||
		len(c) != 1 || c[0].Reason != "R" || c[0].LastUpdateTime.IsZero() || c[0].LastTransitionTime.IsZero() {
		t.Errorf("approved: %+v", approved)
	}

	// A PUT of the object keeps spec and status.
	put := approved.DeepCopy()
	put.Status.Conditions = nil
	put.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth}
	if got, err := csrs.Update(ctx, put, metav1.UpdateOptions{}); err != nil || len(got.Status.Conditions) != 1 || got.Spec.Usages[0] != certificatesv1.UsageClientAuth {
		t.Errorf("update: %v %+v", err, got)
	}

	// Status: not a certificate that is no PEM; not a Denied condition
	// (both 422, as v1.37.2 words them); then the certificate.
	cur, _ := csrs.Get(ctx, "csr-1", metav1.GetOptions{})
	bad := cur.DeepCopy()
	bad.Status.Certificate = []byte("xxx")
	_, err = csrs.UpdateStatus(ctx, bad, metav1.UpdateOptions{})
	want := `CertificateSigningRequest.certificates.k8s.io "csr-1" is invalid: status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("status with a bad certificate: %v", err)
	}
	deny := cur.DeepCopy()
	deny.Status.Conditions = append(deny.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue})
	_, err = csrs.UpdateStatus(ctx, deny, metav1.UpdateOptions{})
	want = `CertificateSigningRequest.certificates.k8s.io "csr-1" is invalid: [status.conditions: Forbidden: updates may not add a condition of type "Denied", ` +
		"status.conditions: Invalid value: \"{conditions[{\\\"type\\\": \\\"Approved\\\"}], conditions[{\\\"type\\\": \\\"Denied\\\"}]}\": must specify at most one of: " +
		"`conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`]"
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("status adding Denied:\n got %v\nwant %s", err, want)
	}
	issue := cur.DeepCopy()
	issue.Status.Certificate = certificate
	issued, err := csrs.UpdateStatus(ctx, issue, metav1.UpdateOptions{})
	if err != nil || string(issued.Status.Certificate) != string(certificate) {
		t.Fatalf("status with the certificate: %v", err)
	}

	// A merge patch through approval, as controller-runtime's
	// SubResource("approval").Patch sends it, on a second request.
	second, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-2"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "org.io/my-signer", Request: request, Usages: []certificatesv1.KeyUsage{"client auth"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patched, err := csrs.Patch(ctx, second.Name, types.MergePatchType,
		[]byte(`{"status":{"conditions":[{"type":"Approved","status":"True"}]}}`), metav1.PatchOptions{}, "approval")
	if err != nil || len(patched.Status.Conditions) != 1 || patched.Status.Conditions[0].Type != certificatesv1.CertificateApproved {
		t.Errorf("approval patch: %v %+v", err, patched)
	}

	// Create validation.
	_, err = csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-3"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "my-signer", Request: []byte("x")},
	}, metav1.CreateOptions{})
	want = `CertificateSigningRequest.certificates.k8s.io "csr-3" is invalid: [spec.request: Invalid value: "eA==": PEM block type must be CERTIFICATE REQUEST, ` +
		`spec.usages: Required value, spec.signerName: Invalid value: "my-signer": must be a fully qualified domain and path of the form 'example.com/signer-name']`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("create invalid:\n got %v\nwant %s", err, want)
	}
}
