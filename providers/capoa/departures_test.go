package capoa

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every departure is complete, named once, and points at code of ours
// that exists: a registration whose reference rotted would send a reader
// to nothing.
func TestDeparturesPointAtOurCode(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Departures {
		if d.ID == "" || d.CAPOA == "" || d.CAPOARef == "" || d.Ours == "" || d.OursRef == "" || d.ShowsIn == "" {
			t.Errorf("departure %+v: every field is required", d)
		}
		if d.Provider != ControlPlane && d.Provider != Bootstrap {
			t.Errorf("departure %s: provider %q is none of ours", d.ID, d.Provider)
		}
		if seen[d.ID] {
			t.Errorf("departure %s registered twice", d.ID)
		}
		seen[d.ID] = true
		path, symbol, ok := strings.Cut(d.OursRef, " ")
		if !ok {
			t.Errorf("departure %s: OursRef %q is not \"<path> <function>\"", d.ID, d.OursRef)
			continue
		}
		if !declares(t, filepath.Join("..", "..", path), symbol) {
			t.Errorf("departure %s: %s declares no %s", d.ID, path, symbol)
		}
	}
}

func TestIDsByProvider(t *testing.T) {
	cp, bs := IDs(ControlPlane), IDs(Bootstrap)
	if len(cp)+len(bs) != len(Departures) || len(cp) == 0 || len(bs) == 0 {
		t.Fatalf("control-plane %v, bootstrap %v of %d departures", cp, bs, len(Departures))
	}
	if cp[0] != Departures[0].ID {
		t.Errorf("IDs out of report order: %v", cp)
	}
}

// declares says whether the Go file declares the function, or the method
// Type.Method.
func declares(t *testing.T, file, symbol string) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Errorf("parse %s: %v", file, err)
		return false
	}
	recv, name, isMethod := strings.Cut(symbol, ".")
	if !isMethod {
		recv, name = "", symbol
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != name {
			continue
		}
		if receiverName(fn) == recv {
			return true
		}
	}
	return false
}

func receiverName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
