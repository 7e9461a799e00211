package monitor

import (
	"ralph/internal/proc"

	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/plan"
	"ralph/internal/ratelimit"
	"ralph/internal/store"
)

// Source is where a Loader reads from and the settings it cannot read
// there: the thresholds and limits are the caller's configuration, used
// when the state files do not say.
type Source struct {
	Store   *store.Store
	Plan    plan.Options
	Breaker breaker.Thresholds
	Limits  ratelimit.Limits
	// Requests reports pause and stop requests the loop has not obeyed
	// yet (nil: none are known). It is called once per load, on the
	// loading goroutine.
	Requests func() (pause, stop bool)
	// Alive reports whether a process exists; nil asks the operating
	// system (signal 0 on unix). Tests inject it.
	Alive func(pid int) bool
	// LogLines is how much of ralph.log the dashboard keeps (default 200).
	LogLines int
	// RecentRows is how many iterations of metrics.jsonl it keeps (default 50).
	RecentRows int
}

// Defaults for Source's sizes and the bounds of reading a file's tail.
const (
	defaultLogLines   = 200
	defaultRecentRows = 50
	maxTailBytes      = 2 << 20
)

// Loader reads Snapshots, re-reading only the files that changed since its
// previous Load. It is not safe for concurrent use.
type Loader struct {
	src Source

	status, breaker, limits, plan, metrics, logf, logsDir stamp

	loopInfo    LoopInfo
	breakerInfo BreakerInfo
	calls       ratelimit.State
	callsKnown  bool
	callsNote   string
	planInfo    PlanInfo
	recent      []loop.Metrics
	recentNote  string
	log         []string
	logNote     string
	logLines    int
	iterLog     string

	reads int // files read, for tests of the caching
}

// NewLoader returns a Loader over src.
func NewLoader(src Source) *Loader {
	if src.LogLines <= 0 {
		src.LogLines = defaultLogLines
	}
	if src.RecentRows <= 0 {
		src.RecentRows = defaultRecentRows
	}
	if src.Alive == nil {
		src.Alive = proc.Alive
	}
	return &Loader{src: src}
}

// Load reads a snapshot once, with nothing cached.
func Load(src Source, now time.Time) Snapshot { return NewLoader(src).Load(now) }

// Load returns the state at now.
func (l *Loader) Load(now time.Time) Snapshot { return l.load(now, l.src.LogLines) }

// load is Load keeping logLines of ralph.log (the full log view wants more).
func (l *Loader) load(now time.Time, logLines int) Snapshot {
	snap := Snapshot{At: now}
	st := l.src.Store
	if st == nil {
		snap.Loop.Note = "no state directory"
		return snap
	}
	statusChanged := l.status.update(st.StatusFile())
	if statusChanged {
		l.readStatus(st.StatusFile())
	}
	li := l.loopInfo
	if li.Known && !finishedStatuses[li.Status.Status] && li.Status.PID > 0 {
		li.Dead = !l.src.Alive(li.Status.PID)
	}
	if l.src.Requests != nil {
		li.PauseRequested, li.StopRequested = l.src.Requests()
	}
	snap.Loop = li

	if l.breaker.update(st.BreakerFile()) || statusChanged {
		l.readBreaker(st.BreakerFile())
	}
	snap.Breaker = l.breakerInfo

	if l.limits.update(st.RateLimitFile()) {
		l.readCalls(st.RateLimitFile())
	}
	snap.Limits = l.limitsAt(now)

	if l.plan.update(st.FixPlanFile()) {
		l.reads++
		l.planInfo = PlanInfo{}
		if p, err := store.LoadPlan(st.ProjectDir(), st.FixPlanFile(), l.src.Plan); err != nil {
			l.planInfo.Note = fileNote(store.FixPlanName, err)
		} else {
			l.planInfo = PlanInfo{Known: true, Counts: p.Counts()}
		}
	}
	snap.Plan = l.planInfo

	if l.metrics.update(st.MetricsFile()) {
		l.readMetrics(st.MetricsFile())
	}
	snap.Recent, snap.RecentNote = l.recent, l.recentNote

	if l.logf.update(st.LogFile()) || logLines != l.logLines {
		l.logLines = logLines
		l.reads++
		lines, err := tailLines(st.LogFile(), logLines, maxTailBytes)
		l.log, l.logNote = lines, fileNote(store.LogName, err)
	}
	snap.Log, snap.LogNote = l.log, l.logNote

	if li.Running() {
		if l.logsDir.update(st.LogsDir()) || statusChanged || l.iterLog == "" {
			l.iterLog = newestIterationLog(st.LogsDir())
		}
	} else {
		l.iterLog = ""
	}
	snap.IterationLog = l.iterLog
	return snap
}

func (l *Loader) readStatus(path string) {
	l.reads++
	s, err := store.ReadStatus(path)
	if err != nil {
		l.loopInfo = LoopInfo{Note: fileNote(store.StatusName, err)}
		return
	}
	l.loopInfo = LoopInfo{Known: true, Status: s}
}

func (l *Loader) readBreaker(path string) {
	l.reads++
	b := BreakerInfo{Thresholds: l.src.Breaker}
	var s breaker.State
	err := store.ReadJSON(path, &s)
	if err == nil {
		err = s.Validate()
	}
	switch {
	case err == nil:
		b.Known, b.State = true, s
	case errors.Is(err, fs.ErrNotExist):
		if st := l.loopInfo.Status; l.loopInfo.Known && st.Breaker.State != "" {
			b.Known, b.Summary = true, true
			b.State = breaker.State{Status: breaker.Status(st.Breaker.State), Message: st.Breaker.Reason}
		}
	default:
		b.Note = fileNote(store.BreakerName, err)
	}
	l.breakerInfo = b
}

func (l *Loader) readCalls(path string) {
	l.reads++
	var s ratelimit.State
	err := store.ReadJSON(path, &s)
	if err == nil {
		err = s.Validate()
	}
	l.calls, l.callsKnown, l.callsNote = s, err == nil, ""
	if err != nil {
		l.calls = ratelimit.State{}
		if !errors.Is(err, fs.ErrNotExist) {
			l.callsNote = fileNote(store.RateLimitName, err)
		}
	}
}

// limitsAt recounts the window at now: calls leave it as time passes even
// when no file changes.
func (l *Loader) limitsAt(now time.Time) LimitsInfo {
	li := LimitsInfo{Limits: l.src.Limits, Note: l.callsNote}
	st := l.loopInfo
	if st.Known {
		// The running loop's own budget, which flags may have changed.
		li.Limits = ratelimit.Limits{MaxCallsPerHour: st.Status.MaxCallsPerHour, MaxTokensPerHour: st.Status.MaxTokensPerHour}
	}
	switch {
	case l.callsKnown:
		lim := ratelimit.New(li.Limits, l.calls)
		li.Known = true
		li.Calls, li.Tokens = lim.CallsInWindow(now), lim.TokensInWindow(now)
		if ok, until := lim.Allow(now); !ok {
			li.NextFree = until
		}
	case st.Known:
		li.Known = true
		li.Calls, li.Tokens = st.Status.CallsMadeThisHour, st.Status.TokensUsedThisHour
		if t, err := time.Parse(time.RFC3339, st.Status.NextReset); err == nil && t.After(now) {
			li.NextFree = t
		}
	case li.Note == "":
		li.Known = true // no loop has made a call here yet
	}
	return li
}

func (l *Loader) readMetrics(path string) {
	l.reads++
	l.recent, l.recentNote = nil, ""
	lines, err := tailLines(path, l.src.RecentRows, maxTailBytes)
	if err != nil {
		l.recentNote = fileNote(store.MetricsName, err)
		return
	}
	bad := 0
	for _, line := range lines {
		if line == "" {
			continue
		}
		var m loop.Metrics
		if json.Unmarshal([]byte(line), &m) != nil {
			bad++
			continue
		}
		l.recent = append(l.recent, m)
	}
	if bad > 0 {
		l.recentNote = fmt.Sprintf("%d unreadable line(s) skipped", bad)
	}
}

// newestIterationLog is the stdout log of the highest iteration number, the
// later start breaking ties (as the store's retention orders them).
func newestIterationLog(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var best string
	var bestN int64 = -1
	var bestStart string
	for _, e := range entries {
		ln, ok := store.ParseIterationLogName(e.Name())
		if !ok || ln.Suffix != store.StdoutSuffix {
			continue
		}
		if ln.N > bestN || ln.N == bestN && ln.Start > bestStart {
			best, bestN, bestStart = e.Name(), ln.N, ln.Start
		}
	}
	if best == "" {
		return ""
	}
	return filepath.Join(dir, best)
}

// stamp remembers what a file looked like when it was last read.
type stamp struct {
	seen bool
	fi   os.FileInfo // nil when it could not be stat'ed
	err  error
}

// update stats path and reports whether it differs from the last call
// (always true the first time). Size, modification time and identity
// together catch both appends and atomic replacements.
func (s *stamp) update(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		fi = nil
	}
	same := s.seen && (s.err == nil) == (err == nil) && sameFile(s.fi, fi)
	s.seen, s.fi, s.err = true, fi, err
	return !same
}

func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && os.SameFile(a, b)
}

// fileNote is a short account of why name could not be read, "" for a
// missing file (nothing has written it yet, which is not a problem).
func fileNote(name string, err error) string {
	var ce *store.CorruptError
	var pe *fs.PathError
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return ""
	case errors.As(err, &ce) && ce.Line > 0:
		return fmt.Sprintf("%s is corrupt (line %d)", name, ce.Line)
	case errors.As(err, &ce):
		return name + " is corrupt"
	case errors.As(err, &pe):
		return name + ": " + pe.Err.Error()
	default:
		return name + " is invalid"
	}
}
