package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"ralph/internal/account"
	"ralph/internal/agent"
	"ralph/internal/metrics"
	"ralph/internal/redact"
	"ralph/internal/requests"
	"ralph/internal/serve"
	"ralph/internal/temporal"
	"ralph/internal/temporal/daemon"
	"ralph/internal/temporal/worker"
)

const workerLong = `Runs the loops of ` + "`ralph serve --backend temporal`" + ` on this machine: each
task is a Temporal workflow whose decisions any worker makes, and each
iteration an activity that runs the agent here, in the session's working
tree, with this machine's agents and credentials (the tree's .ralphrc, as
for ` + "`ralph run`" + `).

Start as many workers as you like, on one machine or many, all on the same
--temporal-address and --queue. A worker killed mid-iteration loses
nothing: after the heartbeat timeout the iteration runs again on another
worker. See docs/temporal.md.

Prompts and iteration logs go under --home (default: RALPH_HOME, as for
` + "`ralph serve`" + `). Exit codes: 0 stopped by a signal, 1 start-up error.`

type workerOptions struct {
	IO        IO
	Conn      temporal.Conn
	Queue     string
	HostQueue string
	Home      string
	MaxCalls  int
	// MetricsListen is where the worker serves its metrics ("": nowhere).
	MetricsListen string
	// Takeover is where this worker keeps the trees it takes over from
	// hosts that stopped answering ("": it takes none over).
	Takeover string
	// Accounts are the names of the accounts this worker holds
	// (--accounts, else RALPH_WORKER_ACCOUNTS).
	Accounts string
	// OtelEndpoint is where traces go ("": the environment's, else off).
	OtelEndpoint string
}

// newWorkerCmd builds `ralph worker`; runF replaces runWorker in flag tests.
func newWorkerCmd(ios IO, runF func(context.Context, *workerOptions) error) *cobra.Command {
	o := &workerOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run loops of a Temporal-backed fleet on this machine (ralph serve --backend temporal)",
		Long:  workerLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Conn.Address == "" {
				return usageError{fmt.Errorf("--temporal-address: want HOST:PORT of the Temporal frontend")}
			}
			if o.MaxCalls < 1 {
				return usageError{fmt.Errorf("--max-calls %d: want 1 or more", o.MaxCalls)}
			}
			return orDefault(runF, runWorker)(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	temporalConnFlags(f, &o.Conn)
	f.StringVar(&o.Queue, "queue", temporal.DefaultQueue, "the task queue to take work from")
	f.StringVar(&o.HostQueue, "host-queue", "", "this machine's own queue: the agent calls of sessions pinned to it (ralph serve --temporal-pin)")
	f.StringVar(&o.Home, "home", "", "the worker's directory for prompts and logs (default: RALPH_HOME)")
	f.IntVar(&o.MaxCalls, "max-calls", 4, "agent calls this worker runs at once")
	f.StringVar(&o.Accounts, "accounts", "", "NAME,...: the accounts this worker holds (their RALPH_ACCOUNT_<NAME> settings are this machine's); it runs the calls of loops under them (default: $"+envWorkerAccounts+")")
	f.StringVar(&o.OtelEndpoint, "otel-endpoint", "", "URL: export OpenTelemetry traces over OTLP to this collector (default: $OTEL_EXPORTER_OTLP_ENDPOINT; none: off)")
	f.StringVar(&o.MetricsListen, "metrics-listen", "", "ADDR: serve this worker's metrics (agent calls, tokens, cost, verify runs) as GET /metrics here, without a token")
	f.StringVar(&o.Takeover, "takeover", "", "DIR: take over pinned sessions whose host stopped answering, into working trees under DIR (ralph serve --temporal-handover)")
	return cmd
}

func runWorker(ctx context.Context, o *workerOptions) error {
	home, err := filepath.Abs(o.Home)
	if o.Home == "" {
		home, err = serve.DefaultHome()
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	agent.Withhold(serve.DaemonSecrets...)
	hideFromAgents(home)
	hideConn(o.Conn)
	host, _ := os.Hostname()
	id := fmt.Sprintf("ralph-worker@%s/%d", host, os.Getpid())
	takeover := ""
	if o.Takeover != "" {
		if takeover, err = filepath.Abs(o.Takeover); err != nil {
			return err
		}
		if err := os.MkdirAll(takeover, 0o700); err != nil {
			return err
		}
	}
	held, err := heldAccounts(o.Accounts, os.Environ(), os.Getenv)
	if err != nil {
		return err
	}
	// An account's key reaches its own calls only, and no log.
	var accts []account.Account
	names := make([]string, 0, len(held))
	for name, a := range held {
		accts = append(accts, a)
		names = append(names, name)
	}
	sort.Strings(names)
	agent.Withhold(account.KeyVars(accts)...)
	for _, s := range account.Secrets(accts, os.Getenv) {
		redact.Add(s)
	}
	log := &syncLog{w: o.IO.Err}
	tr, stopTraces, err := startTraces(ctx, o.OtelEndpoint, o.IO.Err)
	if err != nil {
		return err
	}
	defer stopTraces()
	// Requests' agents run in the sandbox on the worker, as they would in
	// the daemon: the daemon says which sessions are requests.
	on, err := requests.SandboxFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	confine := buildLoop
	if requestSandbox(log, "ralph worker", on) {
		confine = buildConfined
	}
	var count worker.Counter
	if o.MetricsListen != "" {
		m := metrics.New()
		count = m
		mctx, stop := context.WithCancel(ctx)
		done, err := listenMetrics(mctx, o.MetricsListen, m.Handler(nil), o.IO.Err, "ralph worker")
		if err != nil {
			stop()
			return err
		}
		defer func() { stop(); <-done }()
	}
	fmt.Fprintf(o.IO.Err, "ralph worker: %s on %s queue %s, home %s, %d calls at once\n", id, o.Conn.Address, o.Queue, home, o.MaxCalls)
	for _, name := range names {
		fmt.Fprintf(o.IO.Err, "ralph worker: account %s: %s\n", name, held[name].Describe())
	}
	err = worker.Run(ctx, worker.Options{Conn: temporal.ConnFromEnv(o.Conn), Queue: o.Queue, HostQueue: o.HostQueue,
		Accounts: names, Identity: id, MaxCalls: o.MaxCalls, Log: log,
		Activities: &worker.Activities{Home: home, Build: buildLoop, Log: log,
			HostQueue: o.HostQueue, TakeoverDir: takeover, Accounts: held, BuildVouched: buildLoopVouched, BuildConfined: confine, Tracer: tr, Count: count}})
	if err == nil {
		fmt.Fprintln(o.IO.Err, "ralph worker: stopped")
	}
	return err
}

// envWorkerAccounts is --accounts' default.
const envWorkerAccounts = "RALPH_WORKER_ACCOUNTS"

// heldAccounts are the accounts a worker says it holds (flag, else
// $RALPH_WORKER_ACCOUNTS): each must be set on this machine, as ralph
// serve reads accounts (RALPH_ACCOUNT_<NAME>), since only the name comes
// over Temporal.
func heldAccounts(flag string, environ []string, getenv func(string) string) (map[string]account.Account, error) {
	what := "--accounts"
	if flag == "" {
		flag, what = getenv(envWorkerAccounts), envWorkerAccounts
	}
	if strings.TrimSpace(flag) == "" {
		return nil, nil
	}
	set, err := account.FromEnv(environ, getenv)
	if err != nil {
		return nil, err
	}
	out := map[string]account.Account{}
	for _, name := range strings.Split(flag, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		i := slices.IndexFunc(set, func(a account.Account) bool { return a.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%s: account %q: this machine has no %s%s setting", what, name, account.Prefix, strings.ToUpper(name))
		}
		out[name] = set[i]
	}
	return out, nil
}

// temporalRunner connects `ralph serve --backend temporal` to the cluster;
// close releases the connection.
func temporalRunner(o *serveOptions, log io.Writer) (serve.Runner, func(), error) {
	host, _ := os.Hostname()
	conn := temporal.ConnFromEnv(o.Temporal)
	c, err := temporal.Dial(conn, fmt.Sprintf("ralph-serve@%s/%d", host, os.Getpid()), log)
	if err != nil {
		return nil, nil, err
	}
	r := &daemon.Runner{Client: c, Namespace: conn.Namespace, Queue: o.TemporalQueue, Pins: o.TemporalPins, Heartbeat: o.TemporalHeartbeat, Log: log}
	if o.TemporalHandover != "" {
		r.Handover = &temporal.Handover{Remote: o.TemporalHandover, After: o.TemporalTakeoverAfter}
	}
	return r, c.Close, nil
}

// temporalConnFlags are the flags of the connection to Temporal, the same
// for the daemon and the workers. The API key is not one of them: it is a
// secret, read from the environment (temporal.EnvAPIKey).
func temporalConnFlags(f *pflag.FlagSet, c *temporal.Conn) {
	f.StringVar(&c.Address, "temporal-address", "", "the Temporal frontend HOST:PORT")
	f.StringVar(&c.Namespace, "temporal-namespace", "", "the Temporal namespace (default: \"default\")")
	f.BoolVar(&c.TLS, "temporal-tls", false, "connect over TLS (the CA, client certificate and API key options turn it on too)")
	f.StringVar(&c.CA, "temporal-tls-ca", "", "PEM file of the CAs that sign the server's certificate (default: the system's)")
	f.StringVar(&c.Cert, "temporal-tls-cert", "", "PEM file of the client certificate, for mTLS")
	f.StringVar(&c.Key, "temporal-tls-key", "", "PEM file of the client certificate's key, for mTLS")
	f.StringVar(&c.ServerName, "temporal-tls-server-name", "", "the name the server's certificate must carry, if not the address's host")
}

// checkBackend validates serve's backend flags.
func checkBackend(o *serveOptions) error {
	switch o.Backend {
	case "local":
		return nil
	case "temporal":
		if o.Temporal.Address == "" {
			return usageError{fmt.Errorf("--backend temporal: want --temporal-address HOST:PORT")}
		}
		if o.TemporalHeartbeat < 0 {
			return usageError{fmt.Errorf("--temporal-heartbeat %s: want a positive duration", o.TemporalHeartbeat)}
		}
		if o.TemporalTakeoverAfter <= 0 {
			return usageError{fmt.Errorf("--temporal-takeover-after %s: want a positive duration", o.TemporalTakeoverAfter)}
		}
		return nil
	}
	return usageError{fmt.Errorf("--backend %q: want local or temporal", o.Backend)}
}

// syncLog serialises the lines of many agent calls.
type syncLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
