package source

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// fileFuncs is what a report needs of one source file: the text, and
// for each function (declared or literal) the position of its body's
// opening brace, which is where its first coverage block starts.
type fileFuncs struct {
	text  string
	funcs map[pos]funcInfo // by the body's "{"
}

// pos is a line and a byte column, 1-based, as coverage blocks give them.
type pos struct{ line, col int }

type funcInfo struct {
	name string // "(*Reflector).list", "(*Reflector).watch.func1"
	recv string // the receiver's type name, "" if none (a literal: its declaration's)
	line int    // where the declaration (or literal) starts
}

// parseFuncs reads the functions of a Go file. A function literal is
// named as the compiler names it, and a stack trace shows it: its
// enclosing function's name, then .funcN in the order of the literals
// directly inside it, and .func1.1 for the first literal nested in the
// first, .func1.1.1 one level deeper.
func parseFuncs(filename, text string) (*fileFuncs, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, text, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	ff := &fileFuncs{text: text, funcs: map[pos]funcInfo{}}
	add := func(body *ast.BlockStmt, start token.Pos, name, recv string) {
		if body == nil {
			return
		}
		p := fset.Position(body.Lbrace)
		ff.funcs[pos{p.Line, p.Column}] = funcInfo{name: name, recv: recv, line: fset.Position(start).Line}
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name, recv := declName(fd)
		add(fd.Body, fd.Pos(), name, recv)
		if fd.Body != nil {
			literals(fd.Body, name, ".func", func(lit *ast.FuncLit, name string) {
				add(lit.Body, lit.Pos(), name, recv)
			})
		}
	}
	return ff, nil
}

// literals calls found for each function literal under n that is not
// inside another literal, named outer+sep+N (sep is ".func" under a
// declared function, "." under a literal), and recursively for those
// inside it.
func literals(n ast.Node, outer, sep string, found func(*ast.FuncLit, string)) {
	i := 0
	ast.Inspect(n, func(m ast.Node) bool {
		lit, ok := m.(*ast.FuncLit)
		if !ok {
			return true
		}
		i++
		name := outer + sep + strconv.Itoa(i)
		found(lit, name)
		literals(lit.Body, name, ".", found)
		return false
	})
}

// declName is a declaration's name as a stack trace shows it:
// "(*Reflector).list", "(Type).Method", "New".
func declName(fd *ast.FuncDecl) (name, recv string) {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name, ""
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	// A generic type's receiver: Heap[T] is named Heap[...].
	generic := ""
	switch g := t.(type) {
	case *ast.IndexExpr:
		t, generic = g.X, "[...]"
	case *ast.IndexListExpr:
		t, generic = g.X, "[...]"
	}
	id, ok := t.(*ast.Ident)
	if !ok {
		return fd.Name.Name, ""
	}
	return fmt.Sprintf("(%s%s%s).%s", star, id.Name, generic, fd.Name.Name), id.Name
}
