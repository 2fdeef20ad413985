package apiserver

// Sharded list and watch (KEP-5866), as kube-apiserver v1.36 serves it
// with --feature-gates=ShardedListAndWatch=true (transcripts 60-69), and
// without the gate (73-75), which is its default.
//
// A list or watch may carry shardSelector, a CEL-style expression
// such as
//
//	shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
//
// that keeps the objects whose field hashes (FNV-1a, 64 bits) into
// [start, end). kube-apiserver parses it with k8s.io/apiserver's
// sharding.Parse and matches it with k8s.io/apimachinery's
// sharding.Selector; so does the workshop cluster, with the very same
// packages, once Options.ShardSelectors is given the parser (package
// shardparse): this package does not import k8s.io/apiserver, whose
// parser brings cel-go, antlr and protobuf into every program that links
// it. What is kube-apiserver's own wiring is copied here:
//
//   - the registry's List and Watch parse the parameter only with the
//     gate on, and turn a parse error into "invalid shard selector: …"
//     (k8s.io/apiserver v0.36.3 pkg/registry/generic/registry/store.go);
//     that plain error reaches the client as a 500 Status with no reason
//     (responsewriters.ErrorToAPIStatus), not a 400 (66-68);
//   - an object is kept if it matches the shard, then the label and
//     field selectors (storage.SelectionPredicate.Matches);
//   - a sharded list answers metadata.shardInfo with the selector in its
//     canonical form (SelectionPredicate.SetShardInfoOnList; 62-65);
//   - a watch, watch-list included, sends only the shard's events; its
//     initial-events-end bookmark is the same as without a shard (69).
//
// With the gate off (no Options.ShardSelectors, the default) the
// parameter is ignored, even a malformed one, and no list carries
// shardInfo (74, 75).

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternal "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

// shardSelector returns the request's shard selector: nil when the gate is
// off (no parser) or the parameter absent, else the parsed selector or the error
// kube-apiserver answers.
func (s *Server) shardSelector(opts metainternal.ListOptions) (apisharding.Selector, error) {
	if s.parseShard == nil || opts.ShardSelector == "" {
		return nil, nil
	}
	sel, err := s.parseShard(opts.ShardSelector)
	if err != nil {
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    500,
			Message: fmt.Errorf("invalid shard selector: %w", err).Error(),
		}}
	}
	return sel, nil
}

// inShard reports whether obj belongs to the shard; every object belongs
// to no shard at all (nil). An object whose field cannot be read matches
// nothing, as a failed match drops it in kube-apiserver.
func inShard(sel apisharding.Selector, obj runtime.Object) bool {
	if sel == nil || sel.Empty() {
		return true
	}
	ok, err := sel.Matches(obj)
	return err == nil && ok
}

// setShardInfo marks a list as the shard it is.
func setShardInfo(list runtime.Object, sel apisharding.Selector) {
	if sel == nil || sel.Empty() {
		return
	}
	if l, ok := list.(metav1.ShardedListInterface); ok {
		l.SetShardInfo(&metav1.ShardInfo{Selector: sel.String()})
	}
}

// nthUID is the uid of the n-th object the store creates: the same at
// every run, and shaped as kube-apiserver's random version-4 UUIDs. It
// is a hash of n rather than n itself because a shard is chosen by the
// uid's FNV-1a hash, whose high bits barely change between strings that
// differ only at the end: numbered uids would all fall in one shard,
// where random ones spread evenly.
func nthUID(n uint64) types.UID {
	sum := sha256.Sum256(binary.BigEndian.AppendUint64(nil, n))
	sum[6] = sum[6]&0x0f | 0x40 // version 4
	sum[8] = sum[8]&0x3f | 0x80 // RFC 4122 variant
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]))
}
