package trace

import "testing"

func TestRecordSourceKeepsEachTextOnce(t *testing.T) {
	r := New("test")
	f := SourceFile{Module: "k8s.io/client-go", Version: ClientGo, Path: "tools/cache/reflector.go", Part: "reflector",
		Funcs: []SourceFunc{{Name: "(*Reflector).list", Line: 10, Count: 1}}, Blocks: []SourceBlock{{Start: 10, End: 12, Count: 1}}}
	key := SourceKey(f)
	if key != "k8s.io/client-go@"+ClientGo+"/tools/cache/reflector.go" {
		t.Fatalf("SourceKey = %q", key)
	}
	r.RecordSource(SourceStep{Step: 0, Files: []SourceFile{f}}, map[string]string{key: "first"})
	r.RecordSource(SourceStep{Step: 1, Files: []SourceFile{f}}, map[string]string{key: "second"})
	tr := r.Trace()
	if len(tr.Sources) != 2 || tr.Sources[1].Step != 1 {
		t.Fatalf("Sources = %+v, want steps 0 and 1", tr.Sources)
	}
	if tr.Texts[key] != "first" {
		t.Errorf("Texts[%q] = %q, want the first text kept", key, tr.Texts[key])
	}
	tr.Texts[key] = "changed"
	if r.Trace().Texts[key] != "first" {
		t.Error("Trace() returned the recorder's own map")
	}
}
