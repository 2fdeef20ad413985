package apiserver

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// storage.k8s.io/v1 (kubernetes pkg/registry/storage/storageclass).
var storageStrategies = map[schema.GroupResource]strategy{
	{Group: "storage.k8s.io", Resource: "storageclasses"}: {
		ShortNames: []string{"sc"}, Table: storageClassTable,
		Default: defaultStorageClass,
	},
}

// defaultStorageClass is SetDefaults_StorageClass (pkg/apis/storage/v1/defaults.go).
func defaultStorageClass(obj runtime.Object, _ metav1.Time) {
	sc := obj.(*storagev1.StorageClass)
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
	}
}

// storageClassTable: storageClassColumnDefinitions and
// printStorageClassInternal; a list marks its effective default
// (printStorageClassList, getEffectiveDefaultStorageClass), a get does
// not (printStorageClass).
var storageClassTable = &tablePrinter{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Provisioner", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["provisioner"]},
		{Name: "ReclaimPolicy", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]},
		{Name: "VolumeBindingMode", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]},
		{Name: "AllowVolumeExpansion", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]},
		ageColumn,
	},
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		return storageClassCells(obj.(*storagev1.StorageClass), "", age)
	},
	listCells: func(items []runtime.Object, age func(metav1.Time) string) [][]any {
		var def *storagev1.StorageClass
		for _, o := range items {
			sc := o.(*storagev1.StorageClass)
			if sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" &&
				sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] != "true" {
				continue
			}
			switch {
			case def == nil, sc.CreationTimestamp.After(def.CreationTimestamp.Time),
				sc.CreationTimestamp.Equal(&def.CreationTimestamp) && sc.Name < def.Name:
				def = sc
			}
		}
		var defName string
		if def != nil {
			defName = def.Name
		}
		rows := make([][]any, len(items))
		for i, o := range items {
			rows[i] = storageClassCells(o.(*storagev1.StorageClass), defName, age)
		}
		return rows
	},
}

func storageClassCells(sc *storagev1.StorageClass, effectiveDefault string, age func(metav1.Time) string) []any {
	name := sc.Name
	if effectiveDefault != "" && sc.Name == effectiveDefault {
		name += " (default)"
	}
	reclaim := string(corev1.PersistentVolumeReclaimDelete)
	if sc.ReclaimPolicy != nil {
		reclaim = string(*sc.ReclaimPolicy)
	}
	binding := string(storagev1.VolumeBindingImmediate)
	if sc.VolumeBindingMode != nil {
		binding = string(*sc.VolumeBindingMode)
	}
	expansion := sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
	return []any{name, sc.Provisioner, reclaim, binding, expansion, age(sc.CreationTimestamp)}
}
