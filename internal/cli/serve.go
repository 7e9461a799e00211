package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"ralph/internal/account"
	"ralph/internal/agent"
	"ralph/internal/budget"
	"ralph/internal/config"
	"ralph/internal/dashboard"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/redact"
	"ralph/internal/serve"
	"ralph/internal/store"
	"ralph/internal/telegram"
	"ralph/internal/temporal"
	"ralph/internal/trust"
)

const serveLong = `Runs many loops in one daemon, driven by ` + "`ralph task`" + ` over a local HTTP API.

A session is a named git workspace (--session NAME=DIR, repeatable, or
SESSION=NAME=DIR lines in the config file); it runs one task at a time.
Its .ralphrc and RALPH_<KEY> environment configure its loops exactly as for
` + "`ralph run`" + `. At most --max-parallel loops run at once; the rest queue.

State lives in RALPH_HOME (--home, $RALPH_HOME, else $XDG_STATE_HOME/ralph,
else ~/.local/state/ralph): ralph.db (SQLite), handoffs/ (task files),
logs/<session>/, api-token. The API needs "Authorization: Bearer TOKEN":
$RALPH_API_TOKEN, else RALPH_HOME/api-token (created, mode 0600). The web
dashboard is at / on the same address: open /?token=TOKEN once.

The config file (--config, else RALPH_HOME/serve.conf when it exists) holds
KEY=VALUE lines, read and never run: LISTEN, MAX_PARALLEL, MAX_CONNECTIONS,
METRICS_LISTEN, SESSION (repeatable);
any other KEY is a default for that environment variable (TELEGRAM_BOT_TOKEN,
RALPH_MAX_CALLS_PER_HOUR, …). Flags win over the file, the environment over
its defaults. A file holding a credential must be mode 0600.

A task started without ` + "`ralph task loop`" + ` is left to an interactive agent
in tmux: the watchdog reads the pane of the tmux session --tmux-target
names (default claude-{session}) every --watch-interval, records each
RALPH_STATUS block the agent prints as an iteration (history, breaker, the
task file's status), and ends the task on EXIT_SIGNAL: true or a fully
ticked checklist. It only reads (tmux capture-pane), never types, and
leaves a session alone while a loop works on it. ` + "`ralph task watchdog`" + `
shows what it reads.

--backend temporal runs each task's loop as a Temporal workflow on
` + "`ralph worker`" + ` processes instead of in this process (--temporal-address
HOST:PORT, docs/temporal.md); everything else works the same.

Prometheus metrics (docs/operating.md) are at GET /metrics behind the
token, and with --metrics-listen ADDR also on a listener of their own that
takes no token.

A restart resumes the tasks that were running from their last finished
iteration. Exit codes: 0 stopped by a signal, 1 start-up error.

Telegram (docs/telegram.md): TELEGRAM_BOT_TOKEN turns the bot on and
TELEGRAM_ALLOWED_CHATS (comma-separated chat ids) is then required;
TELEGRAM_ALLOWED_USERS narrows it to people; TELEGRAM_API_URL points at
another Bot API; TELEGRAM_WEBHOOK_SECRET (and TELEGRAM_WEBHOOK_URL) take
updates on POST /webhooks/telegram instead of long polling.`

type serveOptions struct {
	IO          IO
	Home        string
	Config      string
	Listen      string
	Sessions    []serve.Session
	MaxParallel int
	// MaxConns is the HTTP server's connection limit (0: the default,
	// httpcap.DefaultMaxConns or half the open-file limit).
	MaxConns int
	// MetricsListen is a listener of the metrics' own ("": none).
	MetricsListen string
	// HistoryDays is how long a finished task is kept (HISTORY_DAYS).
	HistoryDays   int
	TmuxTarget    string
	TmuxSocket    string
	WatchInterval time.Duration
	// Backend is "local" (loops in this process) or "temporal" (workflows
	// on `ralph worker` processes, docs/temporal.md).
	Backend string
	// Temporal is the connection to the Temporal frontend.
	Temporal          temporal.Conn
	TemporalQueue     string
	TemporalHeartbeat time.Duration
	// TemporalPins pin sessions' agent calls to host queues (SESSION=QUEUE).
	TemporalPins map[string]string
	// TemporalHandover is the git remote pinned sessions' trees are
	// published to after every call ("": none); TemporalTakeoverAfter how
	// long a call waits for its host before a takeover worker runs it.
	TemporalHandover      string
	TemporalTakeoverAfter time.Duration
	// Given names the flags on the command line, which win over the
	// config file.
	Given []string
	// OtelEndpoint is where traces go (OTLP base URL; "": the
	// environment's OTEL_EXPORTER_OTLP_ENDPOINT, else off).
	OtelEndpoint string

	confSessions []serve.Session // from the config file
}

// newServeCmd builds `ralph serve`; runF replaces runServe in flag tests.
func newServeCmd(ios IO, runF func(context.Context, *serveOptions) error) *cobra.Command {
	o := &serveOptions{IO: ios}
	var sessions, pins []string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run many loops in one daemon with an HTTP API (driven by `ralph task`)",
		Long:  serveLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !strings.Contains(o.TmuxTarget, "{session}") {
				return usageError{fmt.Errorf("--tmux-target %q: want {session} in it, e.g. claude-{session}", o.TmuxTarget)}
			}
			if o.WatchInterval < 0 {
				return usageError{fmt.Errorf("--watch-interval %s: want a duration, or 0 to turn the watchdog off", o.WatchInterval)}
			}
			if o.MaxParallel < 1 {
				return usageError{fmt.Errorf("--max-parallel %d: want 1 or more", o.MaxParallel)}
			}
			if o.HistoryDays < 0 {
				return usageError{fmt.Errorf("--history-days %d: want 0 (keep every task) or more", o.HistoryDays)}
			}
			if o.MaxConns < 0 {
				return usageError{fmt.Errorf("--max-connections %d: want 1 or more, or 0 for the default", o.MaxConns)}
			}
			for _, s := range sessions {
				ss, err := serve.ParseSession(s)
				if err != nil {
					return usageError{fmt.Errorf("--session: %w", err)}
				}
				o.Sessions = append(o.Sessions, ss)
			}
			for _, p := range pins {
				name, queue, ok := strings.Cut(p, "=")
				if !ok || !serve.ValidSessionName(name) || queue == "" {
					return usageError{fmt.Errorf("--temporal-pin %q: want SESSION=QUEUE", p)}
				}
				if o.TemporalPins == nil {
					o.TemporalPins = map[string]string{}
				}
				o.TemporalPins[name] = queue
			}
			if err := checkBackend(o); err != nil {
				return err
			}
			cmd.Flags().Visit(func(f *pflag.Flag) { o.Given = append(o.Given, f.Name) })
			return orDefault(runF, runServe)(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Home, "home", "", "RALPH_HOME: the daemon's state directory")
	f.StringVar(&o.Config, "config", "", "the daemon's config file (default RALPH_HOME/serve.conf when it exists)")
	f.StringVar(&o.Listen, "listen", serve.DefaultListen, "address of the HTTP API")
	f.StringArrayVar(&sessions, "session", nil, "a session NAME=DIR (repeatable); DIR must be a git repository")
	f.IntVar(&o.MaxParallel, "max-parallel", 4, "loops running at once; the others queue")
	f.IntVar(&o.HistoryDays, "history-days", serve.DefaultHistoryDays, "days a finished task is kept (HISTORY_DAYS in serve.conf); 0 keeps every task")
	f.IntVar(&o.MaxConns, "max-connections", 0, "HTTP connections kept open; over it the oldest idle or silent one is closed (0: 1024, or half the open-file limit if that is lower)")
	f.StringVar(&o.MetricsListen, "metrics-listen", "", "ADDR: also serve GET /metrics here, without the token (bind it where only the scraper reaches)")
	f.StringVar(&o.TmuxTarget, "tmux-target", serve.DefaultWatchTarget, "the tmux session the watchdog reads for a session; {session} is its name")
	f.StringVar(&o.TmuxSocket, "tmux-socket", "", "the tmux server's socket (tmux -S PATH); default: tmux's own")
	f.DurationVar(&o.WatchInterval, "watch-interval", serve.DefaultWatchInterval, "time between two looks of the watchdog; 0 turns it off")
	f.StringVar(&o.Backend, "backend", "local", "where loops run: local (in this process) or temporal (on `ralph worker` processes)")
	temporalConnFlags(f, &o.Temporal)
	f.StringVar(&o.OtelEndpoint, "otel-endpoint", "", "URL: export OpenTelemetry traces over OTLP/HTTP to this collector (default: $OTEL_EXPORTER_OTLP_ENDPOINT; none: off)")
	f.StringVar(&o.TemporalQueue, "temporal-queue", temporal.DefaultQueue, "the task queue the workers take work from")
	f.StringArrayVar(&pins, "temporal-pin", nil, "SESSION=QUEUE: run the session's agent calls only on workers with --host-queue QUEUE (repeatable)")
	f.DurationVar(&o.TemporalHeartbeat, "temporal-heartbeat", temporal.DefaultHeartbeat, "how long a silent worker keeps an iteration before another worker runs it again")
	f.StringVar(&o.TemporalHandover, "temporal-handover", "", "REMOTE: publish pinned sessions' working trees to this git remote after every call, so a worker with --takeover can carry on when their host dies")
	f.DurationVar(&o.TemporalTakeoverAfter, "temporal-takeover-after", temporal.DefaultTakeoverAfter, "how long a pinned call waits for its host before a takeover worker runs it (with --temporal-handover)")
	return cmd
}

func runServe(ctx context.Context, o *serveOptions) error {
	ios := o.IO
	watch := serve.WatchOptions{Target: o.TmuxTarget, Socket: o.TmuxSocket, Interval: o.WatchInterval}
	if o.WatchInterval == 0 {
		watch.Interval = -1
	}
	home, err := filepath.Abs(o.Home)
	if o.Home == "" {
		home, err = serve.DefaultHome()
	}
	if err != nil {
		return err
	}
	if err := applyServeConf(o, serve.Home(home)); err != nil {
		return err
	}
	agent.Withhold(serve.DaemonSecrets...)
	hideFromAgents(home, o.Config)
	hideConn(o.Temporal)
	sessions, err := sessionsConf(serve.Home(home).SessionsFile())
	if err != nil {
		return err
	}
	sessions = append(append(sessions, o.confSessions...), o.Sessions...)
	tg, err := newTelegram(ios.Err)
	if err != nil {
		return err
	}
	opts := serve.Options{Home: serve.Home(home), Sessions: sessions, MaxParallel: o.MaxParallel, MaxConns: o.MaxConns, HistoryDays: o.HistoryDays,
		Build: buildLoop, Log: ios.Err, Describe: describe, Watch: watch, LockFile: projectLockFile}
	if opts.Budget, err = budget.FromEnv(os.Getenv); err != nil {
		return err
	}
	if opts.Accounts, err = account.FromEnv(os.Environ(), os.Getenv); err != nil {
		return err
	}
	if opts.Priorities, err = fleet.ParsePriorities(os.Getenv(fleet.EnvPriorities)); err != nil {
		return fmt.Errorf("%s: %w", fleet.EnvPriorities, err)
	}
	// An account's key reaches its own calls only, and no log.
	agent.Withhold(account.KeyVars(opts.Accounts)...)
	for _, s := range account.Secrets(opts.Accounts, os.Getenv) {
		redact.Add(s)
	}
	if opts.Now, err = testClock(os.Getenv, ios.Err); err != nil {
		return err
	}
	if note := budgetNote(opts.Budget); note != "" {
		fmt.Fprintln(ios.Err, "ralph serve: "+note)
	}
	if tg != nil {
		opts.Notifier, opts.Routes = tg, tg.Routes()
	}
	if o.Backend == "temporal" {
		r, closeRunner, err := temporalRunner(o, ios.Err)
		if err != nil {
			return err
		}
		defer closeRunner()
		opts.Runner = r
	}
	rq, err := newRequests(ios.Err, home, &opts)
	if err != nil {
		return err
	}
	// Flushed after the daemon closed, when its loops' runs have ended.
	tr, stopTraces, err := startTraces(ctx, o.OtelEndpoint, ios.Err)
	if err != nil {
		return err
	}
	defer stopTraces()
	opts.Tracer = tr
	d, err := serve.Open(opts)
	if err != nil {
		return err
	}
	defer d.Close()
	if tg != nil {
		// Opened once the daemon holds RALPH_HOME.
		if err := tg.Open(filepath.Join(home, "telegram.db")); err != nil {
			return err
		}
		defer tg.Close()
	}
	if rq != nil {
		if err := rq.Open(filepath.Join(home, "requests.db")); err != nil {
			return err
		}
		defer rq.Close()
	}
	token, err := serve.Token(serve.Home(home), true)
	if err != nil {
		return err
	}
	// The web dashboard at / (docs/dashboard.md), behind the same token.
	web := dashboard.New(d, dashboard.Options{Token: token, Log: ios.Err})
	defer web.Close()
	d.SetWeb(web)
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return err
	}
	if !serve.Loopback(o.Listen) {
		fmt.Fprintf(ios.Err, "ralph serve: warning: listening on %s, reachable from other machines; the token is all that guards it — put TLS in front (a reverse proxy)\n", o.Listen)
	}
	all, _ := d.Sessions()
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.Name
	}
	fmt.Fprintf(ios.Err, "ralph serve: listening on http://%s, RALPH_HOME %s, sessions: %s, max %d loops at once%s\n",
		ln.Addr(), home, orNone(strings.Join(names, ", ")), o.MaxParallel, backendNote(o))
	base := "http://" + ln.Addr().String()
	// Clients on this machine find the daemon by its home (ralph task
	// --home, RALPH_HOME), whatever port it listens on.
	if err := serve.WriteAddress(serve.Home(home), base); err != nil {
		fmt.Fprintf(ios.Err, "ralph serve: warning: %v\n", err)
	}
	fmt.Fprint(ios.Err, dashboardNote(base, serve.Home(home), token, isTerminal(ios.Err)))
	metricsDone := closedErr()
	if o.MetricsListen != "" {
		if metricsDone, err = listenMetrics(ctx, o.MetricsListen, d.Metrics(), ios.Err, "ralph serve"); err != nil {
			ln.Close()
			return err
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- d.Serve(ctx, ln, token) }()
	chat := make(chan struct{})
	go func() {
		defer close(chat)
		if tg != nil {
			tg.Run(ctx, d)
		}
	}()
	reqs := make(chan struct{})
	go func() {
		defer close(reqs)
		if rq != nil {
			rq.Run(ctx, d)
		}
	}()
	d.Run(ctx)
	<-chat
	<-reqs
	if err := errors.Join(<-errc, <-metricsDone); err != nil {
		return err
	}
	fmt.Fprintln(ios.Err, "ralph serve: stopped; running tasks resume at the next start")
	return nil
}

// newTelegram builds the Telegram bot when TELEGRAM_BOT_TOKEN is set (nil
// otherwise), from the environment and the config file's defaults. A token
// without an allow-list stops the daemon: a configuration mistake should
// be loud. (No agent sees the token: it is one of serve.DaemonSecrets.)
func newTelegram(log io.Writer) (*telegram.Bot, error) {
	cfg, on, err := telegram.FromEnv(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	if !on {
		return nil, nil
	}
	mode := "long polling"
	if cfg.Webhook() {
		mode = "webhook on " + telegram.WebhookPath
	}
	fmt.Fprintf(log, "ralph serve: telegram on (%s), %d allowed chat(s)\n", mode, len(cfg.AllowedChats))
	return telegram.New(cfg, telegram.Options{Log: log}), nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// buildLoop resolves a session directory's loop as `ralph run` does.
func buildLoop(dir string, warn io.Writer) (loop.Spec, []agent.Adapter, error) {
	return buildLoopWith(dir, warn, config.Layer{})
}

// buildLoopVouched is buildLoop for a tree a worker took over from a host
// that stopped answering: its .ralphrc is trusted if it is the one the
// host ran with (SHA-256 rc), which the host's owner trusted there.
func buildLoopVouched(dir, rc string, warn io.Writer) (loop.Spec, []agent.Adapter, error) {
	return buildLoopTrusting(dir, warn, config.Layer{}, rc)
}

// buildLoopWith is buildLoop with settings over the environment's (the
// sandbox of requests' sessions).
func buildLoopWith(dir string, warn io.Writer, over config.Layer) (loop.Spec, []agent.Adapter, error) {
	return buildLoopTrusting(dir, warn, over, "")
}

// buildLoopTrusting is buildLoopWith that also trusts a .ralphrc whose
// SHA-256 is vouched ("": none).
func buildLoopTrusting(dir string, warn io.Writer, over config.Layer, vouched string) (loop.Spec, []agent.Adapter, error) {
	cfg, skipped, err := readConfig(dir, over, warn)
	if err == nil {
		err = unreadable(skipped)
	}
	if err == nil && (vouched == "" || trust.Sum(dir) != vouched) {
		// A session's .ralphrc runs nothing it names until it is trusted,
		// in the daemon as in `ralph run`.
		err = requireTrust(dir, cfg)
	}
	if err != nil {
		return loop.Spec{}, nil, err
	}
	specs, ads, err := runAgents(cfg)
	if err != nil {
		return loop.Spec{}, nil, err
	}
	st, err := store.OpenWith(dir, store.Options{RalphDir: cfg.RalphDir, PromptFile: cfg.PromptFile})
	if err != nil {
		return loop.Spec{}, nil, err
	}
	return specFrom(cfg, st, specs), ads, nil
}

// projectLockFile is the lock `ralph run` takes in dir, where its .ralphrc
// (RALPH_DIR) puts the state directory; the default one when the settings
// do not read.
func projectLockFile(dir string) string {
	def := filepath.Join(dir, store.DefaultDirName, store.LockName)
	cfg, _, err := readConfig(dir, config.Layer{}, io.Discard)
	if err != nil {
		return def
	}
	st, err := store.OpenWith(dir, store.Options{RalphDir: cfg.RalphDir})
	if err != nil {
		return def
	}
	return st.LockFile()
}

// sessionsConf reads RALPH_HOME/sessions.conf: NAME=DIR lines, # comments.
// A missing file is no sessions.
func sessionsConf(path string) ([]serve.Session, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []serve.Session
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := serve.ParseSession(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// backendNote says where the loops run when it is not here.
func backendNote(o *serveOptions) string {
	if o.Backend != "temporal" {
		return ""
	}
	return fmt.Sprintf(", on Temporal at %s (queue %s)", o.Temporal.Address, o.TemporalQueue)
}

// dashboardNote says where the dashboard is and how to log in: with the
// login link itself only on a terminal a person reads — a log file or a
// service's journal never gets the token, only where to read it.
func dashboardNote(base string, home serve.Home, token string, terminal bool) string {
	if terminal {
		return fmt.Sprintf("ralph serve: dashboard %s/ — log in once with %s/?token=%s\n", base, base, token)
	}
	where := home.TokenFile()
	if os.Getenv(serve.EnvToken) != "" {
		where = "$" + serve.EnvToken
	}
	return fmt.Sprintf("ralph serve: dashboard %s/ — log in once with %s/?token=TOKEN, the token in %s\n", base, base, where)
}
