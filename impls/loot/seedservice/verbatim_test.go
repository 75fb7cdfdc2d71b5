package seedservice

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/ref/loot/mysql/docsql"
)

// The service's SQL is the document's: these checks need no JDK. The Go
// transcription ref/loot/mysql/docsql (which loot-seed-verbatim runs) is
// the reference text, so the Java service and the matrix row run the same
// statements.

const verbatimRepro = "go test -count=1 -run 'TestMapperStatementsAreDocsqls|TestSchemaIsDocsqls' ./impls/loot/seedservice"

// squash folds every run of whitespace into one space, so text laid out
// differently (a text block's indentation, the document's one line)
// compares equal.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// mapperStatement is LootMapper.java's `Statement.of("name", """sql""")`.
var mapperStatement = regexp.MustCompile(`(?s)Statement\.of\("(\w+)", """(.*?)"""\)`)

// TestMapperStatementsAreDocsqls: every statement LootMapper.java runs is
// one of docsql's, word for word, and every one of docsql's is there.
func TestMapperStatementsAreDocsqls(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("src", "main", "java", "com", "example", "loot", "mapper", "LootMapper.java"))
	if err != nil {
		t.Fatal(err)
	}
	java := map[string]string{}
	for _, m := range mapperStatement.FindAllStringSubmatch(string(src), -1) {
		java[m[1]] = squash(m[2])
	}
	for _, s := range docsql.Statements() {
		got, ok := java[s.Name]
		if !ok {
			t.Errorf("LootMapper.java has no statement %s; reproduce: %s", s.Name, verbatimRepro)
			continue
		}
		if want := squash(s.Mapper); got != want {
			t.Errorf("LootMapper.java's %s differs from docsql's:\n got %s\nwant %s\nreproduce: %s", s.Name, got, want, verbatimRepro)
		}
		delete(java, s.Name)
	}
	for name := range java {
		t.Errorf("LootMapper.java's %s is not a docsql statement; reproduce: %s", name, verbatimRepro)
	}
}

// TestSchemaIsDocsqls: schema.sql, the file the tests apply, is
// docsql.Schema statement for statement.
func TestSchemaIsDocsqls(t *testing.T) {
	got := schemaStatements(t)
	if len(got) != len(docsql.Schema) {
		t.Fatalf("schema.sql has %d statements, docsql.Schema %d; reproduce: %s", len(got), len(docsql.Schema), verbatimRepro)
	}
	for i, want := range docsql.Schema {
		if squash(got[i]) != squash(want) {
			t.Errorf("schema.sql statement %d differs from docsql.Schema:\n got %s\nwant %s\nreproduce: %s", i+1, squash(got[i]), squash(want), verbatimRepro)
		}
	}
}
