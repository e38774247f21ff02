package distributor_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The code's shape, so that it cannot drift: no production file over
// maxProdFile lines, no test file over maxTestFile, no function or method
// over maxFunc from its func keyword to its closing brace. The production
// total is only logged: it has a goal, prodGoal, that other work brings it
// down to.
const (
	maxProdFile = 600
	maxTestFile = 800
	maxFunc     = 100
	prodGoal    = 29000
)

// notProduction filters the production count the goal is measured with:
//
//	git ls-files '*.go' | grep -v '_test.go$' |
//	grep -vE '(^|/)(testdata|storagetest|testutil)/|test/|test\.go$' |
//	xargs cat | wc -l
var notProduction = regexp.MustCompile(`_test\.go$|(^|/)(testdata|storagetest|testutil)/|test/|test\.go$`)

func TestCodeShape(t *testing.T) {
	files := goFiles(t)
	if len(files) == 0 {
		t.Fatal("no Go files found")
	}
	fset := token.NewFileSet()
	prod := 0
	for _, name := range files {
		src, err := os.ReadFile(name)
		if os.IsNotExist(err) {
			continue // tracked, but removed in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		newlines := bytes.Count(src, []byte("\n"))
		if !notProduction.MatchString(name) {
			prod += newlines // as wc -l counts
		}
		lines := newlines
		if len(src) > 0 && src[len(src)-1] != '\n' {
			lines++
		}
		isTest := strings.HasSuffix(name, "_test.go")
		limit := maxProdFile
		if isTest {
			limit = maxTestFile
		}
		if lines > limit {
			t.Errorf("%s:%d: the file has %d lines, more than %d", name, lines, lines, limit)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			from := fset.Position(fn.Pos()).Line
			n := fset.Position(fn.End()).Line - from + 1
			if n <= maxFunc {
				continue
			}
			t.Errorf("%s:%d: %s has %d lines, more than %d", name, from, funcName(fn), n, maxFunc)
		}
	}
	t.Logf("production Go lines: %d (goal %d)", prod, prodGoal)
}

// goFiles lists the repository's tracked Go files, relative to the module
// root; without git it walks the tree, skipping what is not the project's.
func goFiles(t *testing.T) []string {
	if out, err := exec.Command("git", "ls-files", "-z", "--", "*.go").Output(); err == nil {
		return strings.FieldsFunc(string(out), func(r rune) bool { return r == 0 })
	}
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		p = filepath.ToSlash(p)
		switch {
		case err != nil:
			return err
		case d.IsDir() && (p == ".git" || p == ".test-servers" || p == "bench/out" || d.Name() == "testdata"):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(p, ".go"):
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// funcName names a function, or a method as Type.Name.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := strings.TrimPrefix(types.ExprString(fn.Recv.List[0].Type), "*")
	recv, _, _ = strings.Cut(recv, "[")
	return recv + "." + fn.Name.Name
}
