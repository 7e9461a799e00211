package scaffold

import (
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Commands are a stack's shell commands, run from the stack's directory;
// "" when the project gives no way to know one.
type Commands struct {
	Install string `json:"install,omitempty"`
	Build   string `json:"build,omitempty"`
	Test    string `json:"test,omitempty"`
	Lint    string `json:"lint,omitempty"`
	Run     string `json:"run,omitempty"`
}

// Stack is one build system found in the project.
type Stack struct {
	ID             string   `json:"id"`       // go, node, python, rust, java, ruby, php, dotnet, elixir, make
	Name           string   `json:"name"`     // for people: "TypeScript (pnpm)"
	Language       string   `json:"language"` // for PROJECT_TYPE: go, typescript, python, …; "" for make
	Dir            string   `json:"dir"`      // "." or a top-level directory, slash separated
	PackageManager string   `json:"package_manager,omitempty"`
	Evidence       []string `json:"evidence"` // the files that gave it away
	Commands       Commands `json:"commands"`
	Notes          []string `json:"notes,omitempty"` // what could not be worked out
}

// skipDirs are top-level directories whose build files are not the
// project's own: dependencies, build output, examples and test fixtures.
var skipDirs = map[string]bool{
	"node_modules": true, "vendor": true, "target": true, "build": true, "dist": true,
	"out": true, "bin": true, "obj": true, "venv": true, "env": true, "__pycache__": true,
	"examples": true, "example": true, "testdata": true, "fixtures": true, "third_party": true,
	"deps": true, "_build": true,
}

// Detect lists the stacks of the project in fsys: those at its root first,
// then those in top-level directories (a monorepo's "web/" or "backend/").
// A sub-directory stack of a kind the root already has is left out: the root
// build (a Maven reactor, a Gradle, Cargo or npm workspace) covers it. Make is
// only read at the root, where its targets are the project's entry points.
func Detect(fsys fs.FS) ([]Stack, error) {
	root, err := newDirView(fsys, ".", nil)
	if err != nil {
		return nil, err
	}
	stacks := root.detect()
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || skipDirs[name] {
			continue
		}
		sub, err := newDirView(fsys, name, root)
		if err != nil {
			continue // an unreadable directory is not worth failing over
		}
		for _, s := range sub.detect() {
			if s.ID == "make" || slices.ContainsFunc(stacks, func(r Stack) bool { return r.Dir == "." && r.ID == s.ID }) {
				continue
			}
			stacks = append(stacks, s)
		}
	}
	return stacks, nil
}

// ProjectType is the PROJECT_TYPE value for the detected stacks: the
// language of the first stack that has one, "unknown" without.
func ProjectType(stacks []Stack) string {
	for _, s := range stacks {
		if s.Language != "" {
			return s.Language
		}
	}
	return "unknown"
}

// dirView is one directory's file names, with bounded reads.
type dirView struct {
	fsys  fs.FS
	dir   string
	names map[string]bool // entries; directories carry a trailing "/"
	root  *dirView        // the project root, for lockfiles a workspace keeps there; nil at the root
}

func newDirView(fsys fs.FS, dir string, root *dirView) (*dirView, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	v := &dirView{fsys: fsys, dir: dir, names: map[string]bool{}, root: root}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		v.names[n] = true
	}
	return v, nil
}

func (v *dirView) has(names ...string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return v.names[n] })
}

// first returns the first of names present, "" if none.
func (v *dirView) first(names ...string) string {
	for _, n := range names {
		if v.names[n] {
			return n
		}
	}
	return ""
}

// withSuffix lists the entries ending in one of the suffixes, sorted.
func (v *dirView) withSuffix(suffixes ...string) []string {
	var out []string
	for n := range v.names {
		for _, s := range suffixes {
			if strings.HasSuffix(n, s) && !strings.HasSuffix(n, "/") {
				out = append(out, n)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// maxRead bounds what detection reads of one file: build files are small,
// and a huge one must not stall a command.
const maxRead = 1 << 20

func (v *dirView) read(name string) []byte {
	if !v.names[name] {
		return nil
	}
	f, err := v.fsys.Open(path.Join(v.dir, name))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxRead))
	return b
}

// text is read as one lower-cased string, for simple "does it mention" tests.
func (v *dirView) text(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.Write(v.read(n))
		b.WriteByte('\n')
	}
	return strings.ToLower(b.String())
}

func (v *dirView) detect() []Stack {
	var out []Stack
	for _, d := range []func(*dirView) []Stack{
		one(detectGo), detectNode, one(detectPython), one(detectRust), detectJava,
		one(detectRuby), one(detectPHP), one(detectDotnet), one(detectElixir),
	} {
		out = append(out, d(v)...)
	}
	if v.root == nil {
		if s := detectMake(v); s != nil {
			out = append(out, *s)
		}
	}
	for i := range out {
		out[i].Dir = v.dir
	}
	return out
}

func one(f func(*dirView) *Stack) func(*dirView) []Stack {
	return func(v *dirView) []Stack {
		if s := f(v); s != nil {
			return []Stack{*s}
		}
		return nil
	}
}

func detectGo(v *dirView) *Stack {
	ev := v.first("go.work", "go.mod")
	if ev == "" {
		return nil
	}
	s := &Stack{ID: "go", Name: "Go", Language: "go", Evidence: []string{ev}, Commands: Commands{
		Install: "go mod download", Build: "go build ./...", Test: "go test ./...", Lint: "go vet ./...",
	}}
	if lint := v.first(".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"); lint != "" {
		s.Commands.Lint = "golangci-lint run"
		s.Evidence = append(s.Evidence, lint)
	}
	switch {
	case v.has("main.go"):
		s.Commands.Run = "go run ."
	case v.has("cmd/"):
		if cmds, _ := fs.ReadDir(v.fsys, path.Join(v.dir, "cmd")); len(cmds) == 1 && cmds[0].IsDir() {
			s.Commands.Run = "go run ./cmd/" + cmds[0].Name()
		}
	}
	return s
}

func detectRust(v *dirView) *Stack {
	if !v.has("Cargo.toml") {
		return nil
	}
	s := &Stack{ID: "rust", Name: "Rust (cargo)", Language: "rust", PackageManager: "cargo",
		Evidence: []string{"Cargo.toml"}, Commands: Commands{
			Install: "cargo fetch", Build: "cargo build", Test: "cargo test", Lint: "cargo clippy --all-targets",
		}}
	if v.has("src/") {
		if _, err := fs.Stat(v.fsys, path.Join(v.dir, "src", "main.rs")); err == nil {
			s.Commands.Run = "cargo run"
		}
	}
	if s.Commands.Run == "" && strings.Contains(v.text("Cargo.toml"), "[[bin]]") {
		s.Commands.Run = "cargo run"
	}
	return s
}

func detectDotnet(v *dirView) *Stack {
	projects := v.withSuffix(".sln", ".slnx", ".csproj", ".fsproj", ".vbproj")
	if len(projects) == 0 {
		return nil
	}
	s := &Stack{ID: "dotnet", Name: ".NET (C#)", Language: "csharp", PackageManager: "dotnet",
		Evidence: projects, Commands: Commands{
			Install: "dotnet restore", Build: "dotnet build", Test: "dotnet test",
			Lint: "dotnet format --verify-no-changes",
		}}
	if len(v.withSuffix(".fsproj")) > 0 && len(v.withSuffix(".csproj")) == 0 {
		s.Name, s.Language = ".NET (F#)", "fsharp"
	}
	// dotnet run needs exactly one project to pick.
	if len(v.withSuffix(".sln", ".slnx")) == 0 && len(projects) == 1 {
		s.Commands.Run = "dotnet run"
	}
	return s
}

func detectElixir(v *dirView) *Stack {
	if !v.has("mix.exs") {
		return nil
	}
	mix := v.text("mix.exs")
	s := &Stack{ID: "elixir", Name: "Elixir (mix)", Language: "elixir", PackageManager: "mix",
		Evidence: []string{"mix.exs"}, Commands: Commands{
			Install: "mix deps.get", Build: "mix compile", Test: "mix test", Lint: "mix format --check-formatted",
		}}
	if strings.Contains(mix, ":credo") {
		s.Commands.Lint = "mix credo"
	}
	if strings.Contains(mix, ":phoenix") {
		s.Name = "Elixir (Phoenix)"
		s.Commands.Run = "mix phx.server"
	}
	return s
}

// makeTargetRE matches a rule line "name:" but not "name := value".
var makeTargetRE = regexp.MustCompile(`(?m)^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:([^=]|$)`)

func detectMake(v *dirView) *Stack {
	file := v.first("GNUmakefile", "Makefile", "makefile")
	if file == "" {
		return nil
	}
	targets := map[string]bool{}
	for _, m := range makeTargetRE.FindAllStringSubmatch(string(v.read(file)), -1) {
		targets[m[1]] = true
	}
	pick := func(names ...string) string {
		for _, n := range names {
			if targets[n] {
				return "make " + n
			}
		}
		return ""
	}
	s := &Stack{ID: "make", Name: "Make", Evidence: []string{file}, Commands: Commands{
		Install: pick("deps", "setup", "bootstrap"),
		Build:   pick("build", "all"),
		Test:    pick("test", "tests", "check"),
		Lint:    pick("lint", "vet", "fmt-check", "check-fmt"),
		Run:     pick("run", "serve", "dev", "start"),
	}}
	if s.Commands == (Commands{}) {
		s.Notes = append(s.Notes, file+" has none of the usual targets (build, test, lint, run)")
	}
	return s
}
