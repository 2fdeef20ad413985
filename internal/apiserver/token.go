package apiserver

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// serviceaccounts/token: a TokenRequest answered as kube-apiserver
// v1.37.2 answers it (kubernetes pkg/registry/core/serviceaccount/storage/
// token.go, TokenREST.Create; the claims of pkg/serviceaccount/claims.go;
// the JWT of pkg/serviceaccount/jwt.go): a JWT signed RS256 with the
// server's key, the key's ID the base64url SHA-256 of its DER public key,
// and the claims iss, sub (system:serviceaccount:NS:NAME), aud (the
// request's audiences, else the server's: its issuer), exp, iat, nbf, jti
// and kubernetes.io (namespace, serviceaccount, and the pod, its node,
// the secret or the node the token is bound to). The key and issuer are
// served as kube-apiserver serves them, at /.well-known/openid-configuration
// and /openid/v1/jwks (pkg/routes/openidmetadata.go), so that the token
// can be verified as a real cluster's is.
//
// The workshop cluster authenticates no one: it accepts every request,
// with this token or any other or none. The token proves to it nothing
// more than any other, and a test that acts as a ServiceAccount with it
// is not refused anything.

// tokenIssuer is the issuer the tokens name and the audience they are
// for by default: what hack/realk8s and kubeadm give kube-apiserver
// (--service-account-issuer; --api-audiences defaults to it).
const tokenIssuer = "https://kubernetes.default.svc.cluster.local"

// tokenRequestResource describes the kind the subresource takes and
// answers; it is no resource of its own.
var tokenRequestResource = &Resource{
	GVR: authenticationv1.SchemeGroupVersion.WithResource("tokenrequests"), Kind: "TokenRequest", Namespaced: true,
	New: func() runtime.Object { return &authenticationv1.TokenRequest{} },
}

// signingKey is the key tokens are signed with, made on first use, once
// per process (a 2048-bit RSA key takes tens of milliseconds to make: a
// server that issues no token does not pay for it), with its key ID.
var signingKey = sync.OnceValues(func() (*rsa.PrivateKey, string) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic("apiserver: making the service-account signing key: " + err.Error())
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		panic("apiserver: the service-account signing key: " + err.Error())
	}
	sum := sha256.Sum256(der)
	return key, base64.RawURLEncoding.EncodeToString(sum[:])
})

// isTokenSubresource reports whether sub of res is serviceaccounts/token.
func isTokenSubresource(res *Resource, sub string) bool {
	return res.GVR == serviceAccountsGVR && sub == "token"
}

// serveToken answers a POST of a TokenRequest: 201 and the request with
// its status, the token.
func (s *Server) serveToken(rw responder, r *http.Request, req request) {
	rw.res = tokenRequestResource
	if req.verb != "create" {
		rw.error(apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "serviceaccounts/token"}, r.Method))
		return
	}
	_, err := writeOptions(r.URL.Query(), &metav1.CreateOptions{})
	var obj runtime.Object
	if err == nil {
		obj, err = decodeBody(rw.w, r, tokenRequestResource)
	}
	if err == nil {
		obj, err = s.store.token(req.namespace, req.name, obj.(*authenticationv1.TokenRequest), fieldManager(r))
	}
	rw.respond(http.StatusCreated, obj, err)
}

// token is TokenREST.Create. It writes nothing (a dry run is the same).
func (s *store) token(namespace, name string, tr *authenticationv1.TokenRequest, manager string) (runtime.Object, error) {
	gk := tokenRequestResource.GroupVersionKind().GroupKind()
	if tr.Name != "" && tr.Name != name {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), tr.Name, "must match the service account name if specified")})
	}
	if tr.Namespace != "" && tr.Namespace != namespace {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "namespace"), tr.Namespace, "must match the service account namespace if specified")})
	}
	// SetDefaults_TokenRequestSpec, at decoding: the writer owns it.
	if tr.Spec.ExpirationSeconds == nil {
		tr.Spec.ExpirationSeconds = ptr.To[int64](3600)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sa, ok := s.objectsOf(serviceAccountsGVR)[objectKey(namespace, name)].(*corev1.ServiceAccount)
	if !ok {
		return nil, apierrors.NewNotFound(s.reg.lookup(serviceAccountsGVR).GroupResource(), name)
	}
	if tr.UID != "" && tr.UID != sa.UID { // TokenRequestServiceAccountUIDValidation, on by default
		return nil, apierrors.NewConflict(schema.GroupResource{Group: gk.Group, Resource: gk.Kind}, name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", tr.UID, sa.UID))
	}
	// The managed fields are the request's as decoded (the handler
	// records them before the REST storage runs).
	out := s.manageFields(tokenRequestResource, "token", &authenticationv1.TokenRequest{}, tr, manager).(*authenticationv1.TokenRequest)
	if len(out.Spec.Audiences) == 0 {
		out.Spec.Audiences = []string{tokenIssuer}
	}
	out.Name, out.Namespace, out.UID = sa.Name, sa.Namespace, sa.UID
	now := s.now()
	out.CreationTimestamp = now
	out.Status = authenticationv1.TokenRequestStatus{}
	exp := *out.Spec.ExpirationSeconds
	switch {
	case exp < 600:
		return nil, apierrors.NewInvalid(gk, "", field.ErrorList{field.Invalid(field.NewPath("spec", "expirationSeconds"), exp, "may not specify a duration less than 10 minutes")})
	case exp > 1<<32:
		return nil, apierrors.NewInvalid(gk, "", field.ErrorList{field.Invalid(field.NewPath("spec", "expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds")})
	}

	k8s := map[string]any{"namespace": sa.Namespace, "serviceaccount": tokenRef(sa.Name, sa.UID)}
	var boundToPod bool
	if ref := out.Spec.BoundObjectRef; ref != nil {
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		get := func(gvr schema.GroupVersionResource, ns, name string) (metav1.Object, error) {
			obj, ok := s.objectsOf(gvr)[objectKey(ns, name)]
			if !ok {
				return nil, apierrors.NewNotFound(s.reg.lookup(gvr).GroupResource(), name)
			}
			return metaOf(obj), nil
		}
		var bound metav1.Object
		var err error
		switch {
		case gvk.Group == "" && gvk.Kind == "Pod":
			if bound, err = get(podsGVR, namespace, ref.Name); err != nil {
				return nil, err
			}
			pod := bound.(*corev1.Pod)
			if name != pod.Spec.ServiceAccountName {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", name))
			}
			k8s["pod"] = tokenRef(pod.Name, pod.UID)
			boundToPod = true
			if node := pod.Spec.NodeName; node != "" { // ServiceAccountTokenPodNodeInfo
				n, err := get(nodesGVR, "", node)
				if err != nil {
					n = &metav1.ObjectMeta{Name: node} // a missing node: its name only
				}
				k8s["node"] = tokenRef(n.GetName(), n.GetUID())
			}
		case gvk.Group == "" && gvk.Kind == "Node":
			if bound, err = get(nodesGVR, "", ref.Name); err != nil {
				return nil, err
			}
			k8s["node"] = tokenRef(bound.GetName(), bound.GetUID())
		case gvk.Group == "" && gvk.Kind == "Secret":
			if bound, err = get(secretsGVR, namespace, ref.Name); err != nil {
				return nil, err
			}
			k8s["secret"] = tokenRef(bound.GetName(), bound.GetUID())
		default:
			// Webhook configurations (APIServerWebhookAuthenticationToken)
			// need attestations and authorization: not served.
			return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
		}
		if ref.UID != "" && ref.UID != bound.GetUID() {
			return nil, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
				fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
		}
	}
	// --service-account-extend-token-expiration (on by default): a
	// pod-bound token of kube-apiserver's audience asked for 3607 s (the
	// kubelet's) lives a year, with a warnafter claim at 3607 s.
	jwtExp := exp
	if boundToPod && exp == 3600+7 && len(out.Spec.Audiences) == 1 && out.Spec.Audiences[0] == tokenIssuer {
		k8s["warnafter"] = now.Unix() + exp
		jwtExp = 365 * 24 * 60 * 60
	}
	claims := map[string]any{
		"iss": tokenIssuer, "sub": "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		"aud": out.Spec.Audiences, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Unix() + jwtExp,
		"jti": newJTI(), "kubernetes.io": k8s,
	}
	token, err := signJWT(claims)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %v", err))
	}
	out.Status = authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(now.Add(time.Duration(exp) * time.Second))}
	return out, nil
}

var (
	nodesGVR   = corev1.SchemeGroupVersion.WithResource("nodes")
	secretsGVR = corev1.SchemeGroupVersion.WithResource("secrets")
)

// tokenRef is claims.go's ref: name and uid, each left out when empty.
func tokenRef(name string, uid types.UID) map[string]any {
	ref := map[string]any{}
	if name != "" {
		ref["name"] = name
	}
	if uid != "" {
		ref["uid"] = string(uid)
	}
	return ref
}

// newJTI is a random (version 4) UUID, as uuid.NewString makes the jti.
func newJTI() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// signJWT is go-jose's compact serialization of claims signed RS256:
// the header {"alg":"RS256","kid":...}, the claims as JSON with sorted
// keys (as go-jose merges them into a map), base64url without padding.
func signJWT(claims map[string]any) (string, error) {
	key, kid := signingKey()
	header, err := json.Marshal(map[string]string{"alg": "RS256", "kid": kid})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signed + "." + enc.EncodeToString(sig), nil
}

// serveOpenIDMetadata answers the service-account issuer's discovery
// document and key set as kube-apiserver does (pkg/routes/openidmetadata.go
// and pkg/serviceaccount/openidmetadata.go): JSON, cached for an hour,
// the key set as application/jwk-set+json. The key set's URI is this
// server's own (kube-apiserver's is https://<its address>/openid/v1/jwks).
func (s *Server) serveOpenIDMetadata(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	var body any
	contentType := "application/json"
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		body = struct {
			Issuer        string   `json:"issuer"`
			JWKSURI       string   `json:"jwks_uri"`
			ResponseTypes []string `json:"response_types_supported"`
			SubjectTypes  []string `json:"subject_types_supported"`
			SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
		}{tokenIssuer, s.url + "/openid/v1/jwks", []string{"id_token"}, []string{"public"}, []string{"RS256"}}
	case "/openid/v1/jwks":
		key, kid := signingKey()
		enc := base64.RawURLEncoding
		type jwk struct { // go-jose's JSONWebKey, in its order
			Use string `json:"use"`
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			Alg string `json:"alg"`
			N   string `json:"n"`
			E   string `json:"e"`
		}
		body = map[string][]jwk{"keys": {{"sig", "RSA", kid, "RS256", enc.EncodeToString(key.N.Bytes()),
			enc.EncodeToString(big.NewInt(int64(key.E)).Bytes())}}}
		contentType = "application/jwk-set+json"
	default:
		return false
	}
	b, err := json.Marshal(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return true
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(b)
	return true
}

// tokenTypeConverter knows authentication/v1 TokenRequest, from the
// core v1 document (client-go has no apply configuration for it). Built
// on first use.
var tokenTypeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
	return openAPITypeConverter("api/v1")
})
