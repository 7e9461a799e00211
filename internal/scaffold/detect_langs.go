package scaffold

import (
	"encoding/json"
	"regexp"
	"strings"
)

type packageJSON struct {
	PackageManager  string            `json:"packageManager"`
	Scripts         map[string]string `json:"scripts"`
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
}

// npmPlaceholderTest is what `npm init` writes as the test script; running
// it only fails, so it is no test command.
const npmPlaceholderTest = "no test specified"

func detectNode(v *dirView) []Stack {
	if !v.has("package.json") {
		return nil
	}
	s := Stack{ID: "node", Name: "JavaScript", Language: "javascript", Evidence: []string{"package.json"}}
	var pkg packageJSON
	if err := json.Unmarshal(v.read("package.json"), &pkg); err != nil {
		s.Notes = append(s.Notes, "package.json is not valid JSON: "+err.Error())
	}
	_, ts := pkg.DevDependencies["typescript"]
	if _, dep := pkg.Dependencies["typescript"]; dep || ts || v.has("tsconfig.json") {
		s.Name, s.Language = "TypeScript", "typescript"
	}
	pm, lock := nodePackageManager(v, pkg.PackageManager)
	s.PackageManager = pm
	if lock != "" {
		s.Evidence = append(s.Evidence, lock)
	}
	s.Name = "Node.js/" + s.Name + " (" + pm + ")"

	script := func(names ...string) string {
		for _, n := range names {
			body, ok := pkg.Scripts[n]
			if !ok || (n == "test" && strings.Contains(body, npmPlaceholderTest)) {
				continue
			}
			return nodeScript(pm, n)
		}
		return ""
	}
	s.Commands = Commands{
		Install: pm + " install",
		Build:   script("build"),
		Test:    script("test"),
		Lint:    script("lint", "typecheck", "type-check"),
		Run:     script("dev", "start"),
	}
	if pm == "npm" && v.has("package-lock.json", "npm-shrinkwrap.json") {
		s.Commands.Install = "npm ci"
	}
	if s.Commands.Test == "" {
		s.Notes = append(s.Notes, "package.json has no test script; add one and put it in AGENT.md")
	}
	return []Stack{s}
}

// nodePackageManager picks the package manager: the packageManager field
// (corepack's source of truth), else the lockfile here, else the lockfile at
// the root of a workspace, else npm. It also returns the lockfile seen.
func nodePackageManager(v *dirView, field string) (string, string) {
	if name, _, _ := strings.Cut(field, "@"); name != "" {
		switch name {
		case "npm", "yarn", "pnpm", "bun":
			return name, ""
		}
	}
	locks := []struct{ file, pm string }{
		{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lock", "bun"}, {"bun.lockb", "bun"},
		{"package-lock.json", "npm"}, {"npm-shrinkwrap.json", "npm"},
	}
	for _, dv := range []*dirView{v, v.root} {
		if dv == nil {
			continue
		}
		for _, l := range locks {
			if dv.has(l.file) {
				if dv != v {
					return l.pm, ""
				}
				return l.pm, l.file
			}
		}
	}
	return "npm", ""
}

// nodeScript is the idiomatic way to run a package.json script. `bun test`
// would start bun's own test runner instead of the script, so bun always
// says "run".
func nodeScript(pm, name string) string {
	switch {
	case pm == "bun":
		return "bun run " + name
	case pm == "yarn":
		return "yarn " + name
	case name == "test" || (pm == "npm" && name == "start"):
		return pm + " " + name
	}
	return pm + " run " + name
}

func detectPython(v *dirView) *Stack {
	markers := []string{"pyproject.toml", "uv.lock", "poetry.lock", "Pipfile", "requirements.txt", "setup.py", "setup.cfg"}
	var ev []string
	for _, m := range markers {
		if v.has(m) {
			ev = append(ev, m)
		}
	}
	if len(ev) == 0 {
		return nil
	}
	all := v.text("pyproject.toml", "requirements.txt", "requirements-dev.txt", "setup.cfg", "Pipfile", "tox.ini")
	s := &Stack{ID: "python", Language: "python", Evidence: ev}
	var run string // how a tool is run inside the project's environment
	switch {
	case v.has("uv.lock") || strings.Contains(all, "[tool.uv]"):
		s.PackageManager, run = "uv", "uv run "
		s.Commands.Install = "uv sync"
	case v.has("poetry.lock") || strings.Contains(all, "[tool.poetry]"):
		s.PackageManager, run = "poetry", "poetry run "
		s.Commands.Install = "poetry install"
	case v.has("Pipfile"):
		s.PackageManager, run = "pipenv", "pipenv run "
		s.Commands.Install = "pipenv install --dev"
	default:
		s.PackageManager = "pip"
		switch {
		case v.has("requirements.txt") && v.has("requirements-dev.txt"):
			s.Commands.Install = "pip install -r requirements.txt -r requirements-dev.txt"
		case v.has("requirements.txt"):
			s.Commands.Install = "pip install -r requirements.txt"
		default:
			s.Commands.Install = "pip install -e ."
		}
	}
	s.Name = "Python (" + s.PackageManager + ")"
	if strings.Contains(all, "pytest") || v.has("pytest.ini", "conftest.py") {
		s.Commands.Test = run + "pytest"
		if run == "" {
			s.Commands.Test = "python -m pytest"
		}
	} else {
		s.Commands.Test = run + "python -m unittest discover"
	}
	switch {
	case strings.Contains(all, "ruff") || v.has("ruff.toml", ".ruff.toml"):
		s.Commands.Lint = run + "ruff check ."
	case strings.Contains(all, "flake8") || v.has(".flake8"):
		s.Commands.Lint = run + "flake8"
	}
	if main := v.first("main.py", "app.py"); main != "" {
		s.Commands.Run = strings.TrimSpace(run + "python " + main)
	} else if v.has("manage.py") {
		s.Commands.Run = run + "python manage.py runserver"
	}
	return s
}

// detectJava finds Maven and Gradle builds (both, in the rare project that
// keeps both). A wrapper script in the repository pins the tool's version,
// so it wins over the installed one.
func detectJava(v *dirView) []Stack {
	var out []Stack
	if v.has("pom.xml") {
		mvn, ev := "mvn", []string{"pom.xml"}
		if v.has("mvnw") {
			mvn, ev = "./mvnw", append(ev, "mvnw")
		}
		s := Stack{ID: "java", Name: "Java (Maven)", Language: "java", PackageManager: "maven", Evidence: ev,
			Commands: Commands{Build: mvn + " -q -DskipTests package", Test: mvn + " test"}}
		pom := v.text("pom.xml")
		switch {
		case strings.Contains(pom, "spotless"):
			s.Commands.Lint = mvn + " spotless:check"
		case strings.Contains(pom, "checkstyle"):
			s.Commands.Lint = mvn + " checkstyle:check"
		}
		if strings.Contains(pom, "spring-boot-maven-plugin") {
			s.Commands.Run = mvn + " spring-boot:run"
		}
		out = append(out, s)
	}
	build := v.first("build.gradle.kts", "build.gradle", "settings.gradle.kts", "settings.gradle")
	if build == "" {
		return out
	}
	gradle, ev := "gradle", []string{build}
	if v.has("gradlew") {
		gradle, ev = "./gradlew", append(ev, "gradlew")
	}
	s := Stack{ID: "java", Name: "Java (Gradle)", Language: "java", PackageManager: "gradle", Evidence: ev,
		Commands: Commands{Build: gradle + " assemble", Test: gradle + " test", Lint: gradle + " check -x test"}}
	text := v.text("build.gradle.kts", "build.gradle")
	if strings.Contains(text, "kotlin(") || strings.Contains(text, "org.jetbrains.kotlin") {
		s.Name, s.Language = "Kotlin (Gradle)", "kotlin"
	}
	if gradleApplicationRE.MatchString(text) {
		s.Commands.Run = gradle + " run"
	}
	return append(out, s)
}

// gradleApplicationRE finds the application plugin (which adds `run`), not
// Android's applicationId.
var gradleApplicationRE = regexp.MustCompile(`(?m)(id\s*\(?\s*['"]application['"]|apply\s+plugin:\s*['"]application['"]|^\s*application\s*\{|^\s*application\s*$)`)

func detectRuby(v *dirView) *Stack {
	if !v.has("Gemfile") {
		return nil
	}
	s := &Stack{ID: "ruby", Name: "Ruby (bundler)", Language: "ruby", PackageManager: "bundler",
		Evidence: []string{"Gemfile"}, Commands: Commands{Install: "bundle install"}}
	gems := v.text("Gemfile")
	rails := strings.Contains(gems, "'rails'") || strings.Contains(gems, `"rails"`)
	switch {
	case v.has("spec/", ".rspec"):
		s.Commands.Test = "bundle exec rspec"
	case rails && v.has("bin/"):
		s.Commands.Test = "bin/rails test"
	case v.has("Rakefile"):
		s.Commands.Test = "bundle exec rake test"
	default:
		s.Notes = append(s.Notes, "no spec/, .rspec or Rakefile: the test command is unknown")
	}
	if rails {
		s.Name = "Ruby on Rails (bundler)"
		s.Commands.Run = "bin/rails server"
	}
	if v.has(".rubocop.yml") || strings.Contains(gems, "rubocop") {
		s.Commands.Lint = "bundle exec rubocop"
	}
	return s
}

type composerJSON struct {
	Scripts    map[string]json.RawMessage `json:"scripts"`
	RequireDev map[string]string          `json:"require-dev"`
}

func detectPHP(v *dirView) *Stack {
	if !v.has("composer.json") {
		return nil
	}
	s := &Stack{ID: "php", Name: "PHP (composer)", Language: "php", PackageManager: "composer",
		Evidence: []string{"composer.json"}, Commands: Commands{Install: "composer install"}}
	var c composerJSON
	if err := json.Unmarshal(v.read("composer.json"), &c); err != nil {
		s.Notes = append(s.Notes, "composer.json is not valid JSON: "+err.Error())
	}
	_, pest := c.RequireDev["pestphp/pest"]
	_, phpunit := c.RequireDev["phpunit/phpunit"]
	switch {
	case c.Scripts["test"] != nil:
		s.Commands.Test = "composer test"
	case pest:
		s.Commands.Test = "vendor/bin/pest"
	case phpunit || v.has("phpunit.xml", "phpunit.xml.dist"):
		s.Commands.Test = "vendor/bin/phpunit"
	default:
		s.Notes = append(s.Notes, "no test script, Pest or PHPUnit found: the test command is unknown")
	}
	_, stan := c.RequireDev["phpstan/phpstan"]
	switch {
	case c.Scripts["lint"] != nil:
		s.Commands.Lint = "composer lint"
	case stan || v.has("phpstan.neon", "phpstan.neon.dist"):
		s.Commands.Lint = "vendor/bin/phpstan analyse"
	}
	if v.has("artisan") {
		s.Name = "PHP/Laravel (composer)"
		s.Commands.Run = "php artisan serve"
	}
	return s
}
