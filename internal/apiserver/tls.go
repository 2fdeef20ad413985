package apiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math"
	"math/big"
	"net"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// serverTLS is what an HTTPS workshop cluster serves with (Options.TLS),
// made at start and never written anywhere by the server: a certificate
// authority of its own, a serving certificate it signs for 127.0.0.1, ::1
// and localhost (the names a client on this machine may dial), and a
// client certificate it signs for a kubeconfig's user, as kind's and
// envtest's kubeconfigs carry one. kubectl needs the user: given a
// kubeconfig with an https server and no credential, it prompts for a
// username and password. The server verifies a client certificate that
// is given against its CA, and asks for none: it has no authentication.
//
// Every key is ECDSA P-256, made in well under a millisecond, where the
// 2048-bit RSA keys of client-go's GenerateSelfSignedCertKey (what
// kube-apiserver makes when given no certificate) take tens.
type serverTLS struct {
	serving tls.Certificate
	cas     *x509.CertPool
	caPEM   []byte // the CA's certificate: certificate-authority-data
	// A user's certificate and key, in PEM: client-certificate-data and
	// client-key-data. Common name workshop-admin, organization
	// system:masters, as envtest's admin user.
	clientCert, clientKey []byte
}

func newServerTLS() (*serverTLS, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	// Valid from an hour back, as client-go's self-signed certificates,
	// for a client whose clock is a little behind.
	notBefore := time.Now().Add(-time.Hour)
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{
		CommonName: "workshop-cluster-ca", NotBefore: notBefore,
	}, caKey)
	if err != nil {
		return nil, err
	}
	sign := func(tmpl *x509.Certificate) ([]byte, *ecdsa.PrivateKey, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber = serial.Add(serial, big.NewInt(1))
		tmpl.NotBefore, tmpl.NotAfter = notBefore, ca.NotAfter
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
		return der, key, err
	}
	servingDER, servingKey, err := sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "workshop-cluster"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:    []string{"localhost"},
	})
	if err != nil {
		return nil, err
	}
	clientDER, clientKey, err := sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "workshop-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	t := &serverTLS{
		serving: tls.Certificate{Certificate: [][]byte{servingDER}, PrivateKey: servingKey},
		cas:     x509.NewCertPool(),
	}
	t.cas.AddCert(ca)
	if t.caPEM, err = certutil.EncodeCertificates(ca); err != nil {
		return nil, err
	}
	t.clientCert = pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: clientDER})
	if t.clientKey, err = keyutil.MarshalPrivateKeyToPEM(clientKey); err != nil {
		return nil, err
	}
	return t, nil
}

// config is the server's side: its certificate, and the CA a client
// certificate, if one is given, must chain to. HTTP/2 is offered as
// kube-apiserver offers it, by ALPN (net/http adds "h2" to the protocols
// of a server it serves TLS on).
func (t *serverTLS) config() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{t.serving},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    t.cas,
		MinVersion:   tls.VersionTLS12,
	}
}
