package apiserver

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// bootstrap makes what a real cluster has from the start
// (Options.Bootstrap): what kube-apiserver makes itself (its system
// namespaces and the kubernetes Service, written by "kube-apiserver"),
// and the controller-manager's default ServiceAccounts.
func (s *store) bootstrap() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaultServiceAccounts = true
	for _, name := range []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := s.createLocked(s.reg.lookup(namespacesGVR), "", "kube-apiserver", ns, false); err != nil {
			return err
		}
	}
	// pkg/controlplane/controller/kubernetesservice: the Service in
	// front of the API server, at the service range's first address.
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: "kubernetes", Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"},
		},
		Spec: corev1.ServiceSpec{
			Ports:          []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(6443)}},
			ClusterIP:      serviceIPPrefix + strconv.Itoa(serviceIPFirst),
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
		},
	}
	_, err := s.createLocked(s.reg.lookup(servicesGVR), metav1.NamespaceDefault, "kube-apiserver", svc, false)
	return err
}
