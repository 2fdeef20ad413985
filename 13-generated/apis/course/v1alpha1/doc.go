// Package v1alpha1 is the Go side of the course's own kind, Memo, in
// group course.example.com, version v1alpha1 (chapter 13-generated).
// The markers below are read by k8s.io/code-generator: deepcopy-gen
// writes DeepCopy methods for every type of the package, and groupName
// tells client-gen which API group the package is.
//
// +k8s:deepcopy-gen=package
// +groupName=course.example.com
package v1alpha1
