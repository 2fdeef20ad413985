package v1

// Hub marks v1 as the Widget's hub version, the one every other version
// converts to and from (controller-runtime's pkg/conversion): it is also
// the version the CRD stores. kubebuilder's "create webhook --conversion
// --spoke v2" writes this file.
func (*Widget) Hub() {}
