package scaffold

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// want is the part of a Stack a table row checks.
type want struct {
	id, dir, pm, lang string
	cmds              Commands
}

func check(t *testing.T, got []Stack, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("got %d stacks, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		g := got[i]
		if g.ID != w.id || g.Dir != w.dir || g.PackageManager != w.pm || g.Language != w.lang {
			t.Errorf("stack %d: got id=%s dir=%s pm=%s lang=%s, want %s %s %s %s", i, g.ID, g.Dir, g.PackageManager, g.Language, w.id, w.dir, w.pm, w.lang)
		}
		if g.Commands != w.cmds {
			t.Errorf("stack %d (%s) commands:\n got %+v\nwant %+v", i, g.ID, g.Commands, w.cmds)
		}
		if len(g.Evidence) == 0 {
			t.Errorf("stack %d (%s) has no evidence", i, g.ID)
		}
	}
}

func TestDetectFixtureRepos(t *testing.T) {
	goCmds := Commands{Install: "go mod download", Build: "go build ./...", Test: "go test ./...", Lint: "go vet ./..."}
	tests := []struct {
		repo  string
		wants []want
	}{
		{"go", []want{{"go", ".", "", "go", Commands{Install: "go mod download", Build: "go build ./...",
			Test: "go test ./...", Lint: "golangci-lint run", Run: "go run ./cmd/server"}}}},
		{"node-npm", []want{{"node", ".", "npm", "javascript", Commands{Install: "npm ci", Build: "npm run build",
			Test: "npm test", Lint: "npm run lint", Run: "npm start"}}}},
		{"node-pnpm-ts", []want{{"node", ".", "pnpm", "typescript", Commands{Install: "pnpm install",
			Build: "pnpm run build", Test: "pnpm test", Lint: "pnpm run typecheck", Run: "pnpm run dev"}}}},
		// npm init's placeholder test script is not a test command.
		{"node-yarn", []want{{"node", ".", "yarn", "javascript", Commands{Install: "yarn install",
			Build: "yarn build", Run: "yarn dev"}}}},
		{"node-bun", []want{{"node", ".", "bun", "javascript", Commands{Install: "bun install",
			Test: "bun run test", Lint: "bun run lint"}}}},
		{"python-pip", []want{{"python", ".", "pip", "python", Commands{Install: "pip install -r requirements.txt",
			Test: "python -m pytest", Run: "python app.py"}}}},
		{"python-uv", []want{{"python", ".", "uv", "python", Commands{Install: "uv sync",
			Test: "uv run pytest", Lint: "uv run ruff check ."}}}},
		{"python-poetry", []want{{"python", ".", "poetry", "python", Commands{Install: "poetry install",
			Test: "poetry run python -m unittest discover"}}}},
		{"rust", []want{{"rust", ".", "cargo", "rust", Commands{Install: "cargo fetch", Build: "cargo build",
			Test: "cargo test", Lint: "cargo clippy --all-targets", Run: "cargo run"}}}},
		{"java-maven", []want{{"java", ".", "maven", "java", Commands{Build: "./mvnw -q -DskipTests package",
			Test: "./mvnw test", Run: "./mvnw spring-boot:run"}}}},
		{"java-gradle", []want{{"java", ".", "gradle", "kotlin", Commands{Build: "./gradlew assemble",
			Test: "./gradlew test", Lint: "./gradlew check -x test", Run: "./gradlew run"}}}},
		{"ruby", []want{{"ruby", ".", "bundler", "ruby", Commands{Install: "bundle install",
			Test: "bundle exec rspec", Lint: "bundle exec rubocop"}}}},
		{"php", []want{{"php", ".", "composer", "php", Commands{Install: "composer install",
			Test: "vendor/bin/phpunit", Lint: "vendor/bin/phpstan analyse"}}}},
		{"dotnet", []want{{"dotnet", ".", "dotnet", "csharp", Commands{Install: "dotnet restore", Build: "dotnet build",
			Test: "dotnet test", Lint: "dotnet format --verify-no-changes", Run: "dotnet run"}}}},
		{"elixir", []want{{"elixir", ".", "mix", "elixir", Commands{Install: "mix deps.get", Build: "mix compile",
			Test: "mix test", Lint: "mix credo", Run: "mix phx.server"}}}},
		{"make", []want{{"make", ".", "", "", Commands{Build: "make build", Test: "make test", Lint: "make lint"}}}},
		// Root stacks first, then top-level directories in name order;
		// node_modules and examples are never the project's own.
		{"monorepo", []want{
			{"make", ".", "", "", Commands{Test: "make test"}},
			{"go", "backend", "", "go", goCmds},
			{"node", "frontend", "npm", "typescript", Commands{Install: "npm ci", Build: "npm run build", Test: "npm test"}},
		}},
		{"empty", nil},
	}
	for _, tt := range tests {
		t.Run(tt.repo, func(t *testing.T) {
			got, err := Detect(os.DirFS(filepath.Join("testdata", "repos", tt.repo)))
			if err != nil {
				t.Fatal(err)
			}
			check(t, got, tt.wants)
		})
	}
}

func TestDetectEdgeCases(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name  string
		fs    fstest.MapFS
		wants []want
	}{
		{"packageManager field beats the lockfile", fstest.MapFS{
			"package.json":      file(`{"packageManager":"pnpm@9.1.0","scripts":{"test":"jest"}}`),
			"package-lock.json": file(`{}`),
		}, []want{{"node", ".", "pnpm", "javascript", Commands{Install: "pnpm install", Test: "pnpm test"}}}},
		{"broken package.json still detected", fstest.MapFS{
			"package.json": file(`{"scripts": `),
		}, []want{{"node", ".", "npm", "javascript", Commands{Install: "npm install"}}}},
		{"workspace member covered by the root", fstest.MapFS{
			"package.json":          file(`{"workspaces":["web"],"scripts":{"test":"turbo test"}}`),
			"yarn.lock":             file(``),
			"web/package.json":      file(`{"scripts":{"test":"vitest"}}`),
			"services/api/go.mod":   file("module api\n"),
			"node_modules/x/go.mod": file("module x\n"),
		}, []want{{"node", ".", "yarn", "javascript", Commands{Install: "yarn install", Test: "yarn test"}}}},
		{"sub-directory uses the root lockfile", fstest.MapFS{
			"pnpm-lock.yaml":   file(``),
			"app/package.json": file(`{"scripts":{"build":"vite build"}}`),
		}, []want{{"node", "app", "pnpm", "javascript", Commands{Install: "pnpm install", Build: "pnpm run build"}}}},
		{"android applicationId is not the application plugin", fstest.MapFS{
			"build.gradle": file("android {\n  defaultConfig {\n    applicationId \"com.example\"\n  }\n}\n"),
		}, []want{{"java", ".", "gradle", "java", Commands{Build: "gradle assemble", Test: "gradle test", Lint: "gradle check -x test"}}}},
		{"maven without wrapper, gradle beside it", fstest.MapFS{
			"pom.xml":         file("<project><build><plugin>spotless</plugin></build></project>"),
			"settings.gradle": file("rootProject.name = 'x'\n"),
		}, []want{
			{"java", ".", "maven", "java", Commands{Build: "mvn -q -DskipTests package", Test: "mvn test", Lint: "mvn spotless:check"}},
			{"java", ".", "gradle", "java", Commands{Build: "gradle assemble", Test: "gradle test", Lint: "gradle check -x test"}},
		}},
		{"pipenv with flake8", fstest.MapFS{
			"Pipfile": file("[dev-packages]\nflake8 = \"*\"\n"),
		}, []want{{"python", ".", "pipenv", "python", Commands{Install: "pipenv install --dev",
			Test: "pipenv run python -m unittest discover", Lint: "pipenv run flake8"}}}},
		{"rails", fstest.MapFS{
			"Gemfile":   file("gem 'rails', '~> 7.1'\n"),
			"bin/rails": file("#!/usr/bin/env ruby\n"),
		}, []want{{"ruby", ".", "bundler", "ruby", Commands{Install: "bundle install", Test: "bin/rails test", Run: "bin/rails server"}}}},
		{"composer scripts and laravel", fstest.MapFS{
			"composer.json": file(`{"scripts":{"test":"pest","lint":"pint --test"}}`),
			"artisan":       file("#!/usr/bin/env php\n"),
		}, []want{{"php", ".", "composer", "php", Commands{Install: "composer install", Test: "composer test",
			Lint: "composer lint", Run: "php artisan serve"}}}},
		{"solution file: no single project to run", fstest.MapFS{
			"App.sln":         file(""),
			"Lib.fsproj":      file(""),
			"Makefile":        file("VERSION := 1\n\nci:\n\ttrue\n"),
			"docs/Makefile":   file("html:\n\tsphinx-build\n"),
			"src/Program.txt": file(""),
		}, []want{
			{"dotnet", ".", "dotnet", "fsharp", Commands{Install: "dotnet restore", Build: "dotnet build",
				Test: "dotnet test", Lint: "dotnet format --verify-no-changes"}},
			{"make", ".", "", "", Commands{}},
		}},
		{"go workspace with main.go", fstest.MapFS{
			"go.work": file("go 1.22\n"),
			"main.go": file("package main\n"),
		}, []want{{"go", ".", "", "go", Commands{Install: "go mod download", Build: "go build ./...",
			Test: "go test ./...", Lint: "go vet ./...", Run: "go run ."}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Detect(tt.fs)
			if err != nil {
				t.Fatal(err)
			}
			check(t, got, tt.wants)
		})
	}
}

func TestDetectNotes(t *testing.T) {
	got, err := Detect(os.DirFS(filepath.Join("testdata", "repos", "node-yarn")))
	if err != nil || len(got) != 1 || len(got[0].Notes) == 0 {
		t.Fatalf("want a note about the missing test script, got %+v, %v", got, err)
	}
}

func TestProjectType(t *testing.T) {
	tests := []struct {
		stacks []Stack
		want   string
	}{
		{nil, "unknown"},
		{[]Stack{{ID: "make"}}, "unknown"},
		{[]Stack{{ID: "make"}, {ID: "node", Language: "typescript"}}, "typescript"},
		{[]Stack{{ID: "go", Language: "go"}, {ID: "node", Language: "javascript"}}, "go"},
	}
	for _, tt := range tests {
		if got := ProjectType(tt.stacks); got != tt.want {
			t.Errorf("ProjectType(%v) = %q, want %q", tt.stacks, got, tt.want)
		}
	}
}
