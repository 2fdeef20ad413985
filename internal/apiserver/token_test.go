package apiserver

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestTokenRequest: serviceaccounts/token answers a JWT as kube-apiserver
// v1.37.2 issues it (checked on a real one: header, claims, status,
// managedFields, the 404 and the 422), which verifies with the key the
// server publishes at /openid/v1/jwks, as a real cluster's does.
func TestTokenRequest(t *testing.T) {
	s := startServerWith(t, Options{Bootstrap: true})
	client := kubernetes.NewForConfigOrDie(s.Config())
	ctx := t.Context()
	sa, err := client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewTime(FixedTime)
	if tr.Name != "robot" || tr.Namespace != "default" || tr.UID != sa.UID || !tr.CreationTimestamp.Equal(&now) ||
		ptr.Deref(tr.Spec.ExpirationSeconds, 0) != 3600 || strings.Join(tr.Spec.Audiences, ",") != tokenIssuer ||
		!tr.Status.ExpirationTimestamp.Equal(ptr.To(metav1.NewTime(FixedTime.Add(3600*1e9)))) {
		t.Errorf("token request: %+v", tr)
	}
	if len(tr.ManagedFields) != 1 || tr.ManagedFields[0].Subresource != "token" || string(tr.ManagedFields[0].FieldsV1.Raw) != `{"f:spec":{"f:expirationSeconds":{}}}` {
		t.Errorf("managedFields: %+v", tr.ManagedFields)
	}

	// The JWT: header, claims, and its signature by the published key.
	parts := strings.Split(tr.Status.Token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", tr.Status.Token)
	}
	enc := base64.RawURLEncoding
	header, _ := enc.DecodeString(parts[0])
	_, kid := signingKey()
	if string(header) != `{"alg":"RS256","kid":"`+kid+`"}` {
		t.Errorf("header %s", header)
	}
	payload, _ := enc.DecodeString(parts[1])
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	jti, _ := claims["jti"].(string)
	delete(claims, "jti")
	got, _ := json.Marshal(claims)
	want := `{"aud":["https://kubernetes.default.svc.cluster.local"],"exp":1767229200,"iat":1767225600,"iss":"https://kubernetes.default.svc.cluster.local",` +
		`"kubernetes.io":{"namespace":"default","serviceaccount":{"name":"robot","uid":"` + string(sa.UID) + `"}},"nbf":1767225600,"sub":"system:serviceaccount:default:robot"}`
	if string(got) != want || len(jti) != 36 {
		t.Errorf("claims:\n got %s (jti %q)\nwant %s", got, jti, want)
	}
	get := func(path, contentType string) []byte {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != contentType || resp.Header.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("%s: HTTP %d %v", path, resp.StatusCode, resp.Header)
		}
		return b
	}
	config := get("/.well-known/openid-configuration", "application/json")
	if want := `{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"` + s.URL() + `/openid/v1/jwks",` +
		`"response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`; string(config) != want {
		t.Errorf("openid-configuration:\n got %s\nwant %s", config, want)
	}
	var jwks struct {
		Keys []struct{ Use, Kty, Kid, Alg, N, E string }
	}
	if err := json.Unmarshal(get("/openid/v1/jwks", "application/jwk-set+json"), &jwks); err != nil || len(jwks.Keys) != 1 {
		t.Fatalf("jwks: %v %+v", err, jwks)
	}
	k := jwks.Keys[0]
	n, _ := enc.DecodeString(k.N)
	e, _ := enc.DecodeString(k.E)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	sig, _ := enc.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil || k.Kid != kid || k.Alg != "RS256" || k.Use != "sig" || k.Kty != "RSA" {
		t.Errorf("the token does not verify with the published key: %v %+v", err, k)
	}

	// Audiences asked for; bound to a pod (its name and uid in the claims).
	pod, err := client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{ServiceAccountName: "robot", Containers: []corev1.Container{{Name: "c", Image: "x"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err = client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: []string{"vault"}, ExpirationSeconds: ptr.To[int64](600),
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	payload, _ = enc.DecodeString(strings.Split(tr.Status.Token, ".")[1])
	if !strings.Contains(string(payload), `"aud":["vault"],"exp":1767226200`) || !strings.Contains(string(payload), `"pod":{"name":"p","uid":"`+string(pod.UID)+`"}`) {
		t.Errorf("bound token claims: %s", payload)
	}

	// No such ServiceAccount: 404, as kube-apiserver words it; too short a life: 422.
	_, err = client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "nope", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `serviceaccounts "nope" not found` {
		t.Errorf("missing ServiceAccount: %v", err)
	}
	_, err = client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](100)}}, metav1.CreateOptions{})
	if want := `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 100: may not specify a duration less than 10 minutes`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("short token: %v", err)
	}
}
