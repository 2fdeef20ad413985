package apiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math"
	"math/big"
	"net"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// servingCert makes what an HTTPS workshop cluster serves with (Options.TLS):
// a certificate authority of its own, made at start and never written
// anywhere, and a serving certificate it signs for 127.0.0.1, ::1 and
// localhost, the names a client on this machine may dial. It returns the
// serving certificate and the CA's certificate in PEM, which a client
// trusts as a kubeconfig's certificate-authority-data (as kind's or
// envtest's kubeconfig carries its CA). Both keys are ECDSA P-256: each
// takes well under a millisecond to make, where the 2048-bit RSA keys of
// client-go's GenerateSelfSignedCertKey (what kube-apiserver makes when
// given no certificate) take tens.
func servingCert() (tls.Certificate, []byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	// Both valid from an hour back, as client-go's self-signed
	// certificates, for a client whose clock is a little behind.
	notBefore := time.Now().Add(-time.Hour)
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{
		CommonName: "workshop-cluster-ca", NotBefore: notBefore,
	}, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: serial.Add(serial, big.NewInt(1)),
		Subject:      pkix.Name{CommonName: "workshop-cluster"},
		NotBefore:    notBefore,
		NotAfter:     ca.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, key.Public(), caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	caPEM, err := certutil.EncodeCertificates(ca)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, caPEM, nil
}
