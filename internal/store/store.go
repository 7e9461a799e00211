package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultDirName is the state directory inside a project (RALPH_DIR).
const DefaultDirName = ".ralph"

// File and directory names inside the state directory. The first group is
// the bash tool's layout and must not change; see the package comment.
const (
	PromptName         = "PROMPT.md"
	FixPlanName        = "fix_plan.md"
	AgentName          = "AGENT.md"
	SpecsName          = "specs"
	LogsName           = "logs"
	LogName            = "ralph.log" // inside LogsName
	StatusName         = "status.json"
	BreakerName        = ".circuit_breaker_state"
	AgentSessionName   = ".claude_session_id"
	RalphSessionName   = ".ralph_session"
	SessionHistoryName = ".ralph_session_history"

	RateLimitName     = ".rate_limit_state"
	ClarificationName = "clarification.md"
	MetricsName       = "metrics.jsonl" // inside LogsName
	LockName          = "ralph.lock"
	AgentGroupsName   = ".agent_groups" // process groups of the running agents
)

// Options locate the state directory and prompt when they are not the
// defaults (RALPH_DIR, PROMPT_FILE). Relative paths are taken from the
// project directory.
type Options struct {
	RalphDir   string // "" means .ralph
	PromptFile string // "" means <RalphDir>/PROMPT.md
}

// Store is a project's state directory. It is a set of paths plus the
// operations on them; it holds no open files, so copies are safe and it may
// be used from several goroutines.
type Store struct {
	project string
	dir     string
	prompt  string
	// views and logs are shared by copies: what was last written to each
	// view, how many iterations' logs there can be.
	views *viewMemo
	logs  *logCount
	// spares are the spare files of the hot writes, while a run keeps them.
	spares *spareFiles
}

// Open returns the store of projectDir with the default layout. The project
// directory must exist; the state directory need not (see EnsureDirs and
// RequiredFiles), so commands such as `ralph setup` can open it too.
func Open(projectDir string) (*Store, error) { return OpenWith(projectDir, Options{}) }

// OpenWith is Open with a relocated state directory or prompt file.
func OpenWith(projectDir string, o Options) (*Store, error) {
	abs, err := filepath.Abs(projectDir)
	if err != nil {
		return nil, fmt.Errorf("open project %s: %w", projectDir, err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open project: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("open project: %s is not a directory", abs)
	}
	s := &Store{project: abs, dir: resolve(abs, o.RalphDir, filepath.Join(abs, DefaultDirName)), views: &viewMemo{}, logs: &logCount{}, spares: &spareFiles{}}
	s.prompt = resolve(abs, o.PromptFile, filepath.Join(s.dir, PromptName))
	return s, nil
}

// resolve makes p absolute against base; def (absolute) stands in for "".
func resolve(base, p, def string) string {
	switch {
	case p == "":
		return def
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	default:
		return filepath.Join(base, p)
	}
}

// ProjectDir is the absolute project directory.
func (s *Store) ProjectDir() string { return s.project }

// RalphDir is the absolute state directory, .ralph unless relocated.
func (s *Store) RalphDir() string { return s.dir }

func (s *Store) path(elem ...string) string {
	return filepath.Join(append([]string{s.dir}, elem...)...)
}

// Paths of the state files; see the package comment for what each holds.
func (s *Store) PromptFile() string         { return s.prompt }
func (s *Store) FixPlanFile() string        { return s.path(FixPlanName) }
func (s *Store) AgentFile() string          { return s.path(AgentName) }
func (s *Store) SpecsDir() string           { return s.path(SpecsName) }
func (s *Store) LogsDir() string            { return s.path(LogsName) }
func (s *Store) LogFile() string            { return s.path(LogsName, LogName) }
func (s *Store) MetricsFile() string        { return s.path(LogsName, MetricsName) }
func (s *Store) StatusFile() string         { return s.path(StatusName) }
func (s *Store) BreakerFile() string        { return s.path(BreakerName) }
func (s *Store) AgentSessionFile() string   { return s.path(AgentSessionName) }
func (s *Store) RalphSessionFile() string   { return s.path(RalphSessionName) }
func (s *Store) SessionHistoryFile() string { return s.path(SessionHistoryName) }
func (s *Store) RateLimitFile() string      { return s.path(RateLimitName) }
func (s *Store) ClarificationFile() string  { return s.path(ClarificationName) }
func (s *Store) LockFile() string           { return s.path(LockName) }
func (s *Store) AgentGroupsFile() string    { return s.path(AgentGroupsName) }

// IterationLogs returns the stdout and stderr log paths of iteration n,
// started at start. The UTC start time keeps names unique when a new run
// numbers its iterations again; see PruneIterationLogs for retention.
func (s *Store) IterationLogs(n int, start time.Time) (stdout, stderr string) {
	s.logs.named()
	base := IterationLogBase(n, start)
	return s.path(LogsName, base+StdoutSuffix), s.path(LogsName, base+StderrSuffix)
}

// EnsureDirs creates the state and log directories if they are missing
// (never through a link leading out of the project) and sweeps the
// temporaries that killed writers left there more than StaleTempAge ago.
func (s *Store) EnsureDirs() error {
	if err := MkdirAll(s.LogsDir()); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	// A failed sweep costs a few stray files, never a run.
	_, _ = s.RemoveStaleTemps(StaleTempAge, time.Now())
	return nil
}

// StaleTempAge is how old a temporary file must be before EnsureDirs takes
// it for a killed writer's: no atomic write takes anywhere near that long.
const StaleTempAge = time.Hour

// RequiredFiles checks the files a loop cannot run without (PROMPT.md,
// fix_plan.md, AGENT.md) and returns the paths of those that are missing or
// are not regular files, relative to the project directory so messages stay
// short. A nil slice means the project is intact. The error is for a file
// ralph refuses to read (a link, a link on the way out of the project, one
// over its size cap: see ReadIn) and for stat failures other than "does not
// exist" (e.g. permissions), which the caller should report rather than
// take for a missing file. AGENT.md is checked like the others although
// ralph does not read it: the agent is told to.
func (s *Store) RequiredFiles() (missing []string, err error) {
	for _, f := range []struct {
		path  string
		limit int64
	}{{s.PromptFile(), MaxPromptSize}, {s.FixPlanFile(), MaxPlanSize}, {s.AgentFile(), MaxPromptSize}} {
		serr := CheckIn(s.dir, f.path, f.limit)
		var re *ReadError
		var te *TooLargeError
		switch {
		case errors.As(serr, &re):
			re.Path = s.rel(f.path) // shorter, and free of the machine's directories
		case errors.As(serr, &te):
			te.Path = s.rel(f.path)
		}
		switch {
		case serr == nil:
		case errors.Is(serr, fs.ErrNotExist):
			missing = append(missing, s.rel(f.path))
		case errors.As(serr, &re) && re.Why == notRegular:
			missing = append(missing, s.rel(f.path))
		default:
			err = errors.Join(err, serr)
		}
	}
	return missing, err
}

// MissingFilesError is the integrity failure (exit 7) for RequiredFiles'
// result; it names every missing file so the user can fix them at once.
type MissingFilesError struct {
	Dir     string
	Missing []string
}

func (e *MissingFilesError) Error() string {
	return fmt.Sprintf("integrity check failed: missing %s (run `ralph setup` or restore them)",
		strings.Join(e.Missing, ", "))
}

// CheckRequired is RequiredFiles as an error: nil, a *MissingFilesError, or
// the stat error.
func (s *Store) CheckRequired() error {
	missing, err := s.RequiredFiles()
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if len(missing) > 0 {
		return &MissingFilesError{Dir: s.dir, Missing: missing}
	}
	return nil
}

func (s *Store) rel(p string) string {
	if r, err := filepath.Rel(s.project, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// RemoveStaleTemps sweeps temporaries of killed writers from the state and
// log directories (see the package function).
func (s *Store) RemoveStaleTemps(age time.Duration, now time.Time) ([]string, error) {
	var all []string
	for _, d := range []string{s.dir, s.LogsDir()} {
		r, err := RemoveStaleTemps(d, age, now)
		all = append(all, r...)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return all, err
		}
	}
	return all, nil
}

// ReadStatus reads status.json.
func (s *Store) ReadStatus() (Status, error) { return ReadStatus(s.StatusFile()) }

// WriteStatus writes status.json atomically, with free text redacted. The
// .ralph/ directory belongs to the process running the loop on this
// machine, so its pid goes in when the caller left it out.
func (s *Store) WriteStatus(st Status) error {
	if st.PID == 0 {
		st.PID = os.Getpid()
	}
	return s.writeJSON(s.StatusFile(), sanitize(st), false) // as WriteStatus
}

// AppendMetrics appends one record to logs/metrics.jsonl.
func (s *Store) AppendMetrics(record any) error { return AppendMetrics(s.MetricsFile(), record) }

// Lock takes the project's run lock (see AcquireLock).
func (s *Store) Lock() (*Lock, error) { return AcquireLock(s.LockFile()) }

// OpenLog opens logs/ralph.log with the default rotation.
func (s *Store) OpenLog() (*RotatingWriter, error) {
	return NewRotatingWriter(s.LogFile(), DefaultLogMaxBytes, DefaultLogKeep)
}

// PruneIterationLogs applies iteration log retention to logs/.
//
// The directory is listed only when it may hold more than keep: after a
// listing this store knows how many iterations' logs were left, and it
// counts the logs it has named since.
func (s *Store) PruneIterationLogs(keep int) ([]string, error) {
	if s.logs.within(keep) {
		return nil, nil
	}
	removed, left, err := pruneIterationLogs(s.LogsDir(), keep, false)
	if err == nil {
		s.logs.listed(left)
	}
	return removed, err
}
