package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Memo is a short text that a controller publishes as a ConfigMap
// (chapter 13-generated, step 5). +genclient asks client-gen for a typed
// client (and lister-gen and informer-gen for a lister and an
// informer); because Memo has a Status field, the client gets
// UpdateStatus too. The deepcopy-gen marker makes it a runtime.Object.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Memo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MemoSpec   `json:"spec"`
	Status MemoStatus `json:"status,omitempty"`
}

// MemoSpec is what the user asks for.
type MemoSpec struct {
	// Text is what the memo says.
	Text string `json:"text"`
}

// MemoStatus is what the controller reports, written through the
// status subresource.
type MemoStatus struct {
	// ConfigMap names the ConfigMap that publishes the text.
	ConfigMap string `json:"configMap,omitempty"`
	// ObservedGeneration is the generation whose text it publishes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// MemoList is what a list of memos returns.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type MemoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Memo `json:"items"`
}
