// Package chapterdeps imports every package that a chapter imports (its
// code and its tests, with and without -tags solution, the standard
// library's too), and nothing else.
// It exists for the build's order, not for its code.
//
// Two checks build the chapters again from inside their own test:
// coursecheck reads the chapters' dependencies' export data (go list
// -export) to type-check main.go and the reference answers, and
// reliability builds every chapter into one binary (go build). Each finds
// in the build cache what `go test ./...` compiled already, but only if
// it was compiled already: started early, on an empty cache, a check's
// own go command compiled client-go a second time, beside the outer run.
// Their test packages import this one, so that `go test` compiles all of
// it before it links their test binaries, and their go commands then find
// every dependency compiled. TestComplete keeps the list whole.
package chapterdeps

import (
	_ "bufio"
	_ "bytes"
	_ "cmp"
	_ "context"
	_ "encoding/json"
	_ "errors"
	_ "flag"
	_ "fmt"
	_ "io"
	_ "maps"
	_ "net/http"
	_ "net/url"
	_ "os"
	_ "path"
	_ "reflect"
	_ "regexp"
	_ "runtime"
	_ "slices"
	_ "strconv"
	_ "strings"
	_ "sync"
	_ "sync/atomic"
	_ "testing"
	_ "testing/synctest"
	_ "text/tabwriter"
	_ "time"

	_ "github.com/go-logr/logr"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/informer-walkthrough/informer-walkthrough/internal/apiserver"
	_ "github.com/informer-walkthrough/informer-walkthrough/internal/check/chaptertest"
	_ "github.com/informer-walkthrough/informer-walkthrough/internal/check/leakcheck"
	_ "github.com/informer-walkthrough/informer-walkthrough/internal/cluster"
	_ "github.com/informer-walkthrough/informer-walkthrough/internal/runner"
	_ "github.com/informer-walkthrough/informer-walkthrough/internal/show"
	_ "github.com/informer-walkthrough/informer-walkthrough/workshop"
	_ "k8s.io/api/apps/v1"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/api/errors"
	_ "k8s.io/apimachinery/pkg/api/meta"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	_ "k8s.io/apimachinery/pkg/fields"
	_ "k8s.io/apimachinery/pkg/labels"
	_ "k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/apimachinery/pkg/runtime/schema"
	_ "k8s.io/apimachinery/pkg/types"
	_ "k8s.io/apimachinery/pkg/util/resourceversion"
	_ "k8s.io/apimachinery/pkg/util/runtime"
	_ "k8s.io/apimachinery/pkg/util/wait"
	_ "k8s.io/apimachinery/pkg/watch"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/dynamic/dynamicinformer"
	_ "k8s.io/client-go/features"
	_ "k8s.io/client-go/features/testing"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/informers/apps/v1"
	_ "k8s.io/client-go/informers/core/v1"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/client-go/kubernetes/scheme"
	_ "k8s.io/client-go/kubernetes/typed/apps/v1"
	_ "k8s.io/client-go/kubernetes/typed/core/v1"
	_ "k8s.io/client-go/listers/apps/v1"
	_ "k8s.io/client-go/listers/core/v1"
	_ "k8s.io/client-go/metadata"
	_ "k8s.io/client-go/metadata/metadatainformer"
	_ "k8s.io/client-go/rest"
	_ "k8s.io/client-go/testing"
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/client-go/util/retry"
	_ "k8s.io/client-go/util/watchlist"
	_ "k8s.io/client-go/util/workqueue"
	_ "k8s.io/klog/v2"
	_ "k8s.io/klog/v2/textlogger"
	_ "k8s.io/utils/clock"
	_ "k8s.io/utils/clock/testing"
	_ "k8s.io/utils/ptr"
)
