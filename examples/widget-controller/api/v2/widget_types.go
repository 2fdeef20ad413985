package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetSpec is what a Widget asks for: a ConfigMap holding Entries.
type WidgetSpec struct {
	// Entries are copied into the Widget's ConfigMap, each a key of
	// its data.
	Entries []Entry `json:"entries,omitempty"`
}

// Entry is one key of the ConfigMap's data and its value.
type Entry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// WidgetStatus is what the controller last did.
type WidgetStatus struct {
	// ConfigMap names the ConfigMap the controller made for this Widget.
	ConfigMap string `json:"configMap,omitempty"`
	// ObservedGeneration is the generation of the spec that ConfigMap holds.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Widget is a namespaced object that owns one ConfigMap.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Widget{}, &WidgetList{})
}
