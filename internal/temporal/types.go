package temporal

import (
	"time"

	"ralph/internal/engine"
	"ralph/internal/gate"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/stop"
)

// The workflow's inputs, outputs, signals and query answers: plain data,
// recorded in its history, so a change must still decode what running
// workflows recorded.

// Input starts (or continues) a task's workflow. Everything is plain data.
type Input struct {
	TaskID  string `json:"task_id"`
	Session string `json:"session"`
	// Dir is the session's working tree, TaskFile its plan and Prompt what
	// the agent is told, on the worker's machine.
	Dir      string      `json:"dir"`
	TaskFile string      `json:"task_file"`
	Prompt   string      `json:"prompt"`
	Policy   loop.Policy `json:"policy"`
	// Timeout bounds one agent call (0: DefaultIterationTimeout).
	Timeout   time.Duration `json:"timeout,omitempty"`
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// MaxAttempts bounds the tries of one iteration whose worker died or
	// failed (0: 5).
	MaxAttempts int `json:"max_attempts,omitempty"`
	// HostQueue pins the agent calls to the workers polling it: the ones
	// on the machine that holds the session's working tree ("": any
	// worker of the workflow's queue).
	HostQueue string `json:"host_queue,omitempty"`
	// Accounts are, by agent, the account the daemon chose for the loop's
	// calls of that agent: they go to that account's queue (AccountQueue),
	// which only the workers holding it poll. Only the name travels; each
	// worker reads the account's login from its own settings. None (an
	// agent absent): any worker, under its own login.
	Accounts map[string]string `json:"accounts,omitempty"`
	// ContinueAfter is how many calls one run makes before it continues
	// as new (0: ContinueAfter).
	ContinueAfter int `json:"continue_after,omitempty"`
	// Confined says the session's agents run in the sandbox: a request's.
	Confined bool `json:"confined,omitempty"`
	// Handover, for a pinned session, publishes its working tree after
	// every call, so that another worker can take the task over when the
	// host stops answering (nil: the task waits for its host).
	Handover *Handover `json:"handover,omitempty"`

	// State is the loop state to start from; the rest is carried over by
	// continue-as-new.
	State   loop.State     `json:"state"`
	Begun   bool           `json:"begun,omitempty"`
	Control loop.Control   `json:"control,omitzero"`
	Records []loop.Metrics `json:"records,omitempty"`
	// AgentSession is where inputs written before State held the agent
	// session kept it: the workflow adopts it into State; it is still
	// written, for a worker of that time.
	AgentSession string    `json:"agent_session,omitempty"`
	Plan         stop.Plan `json:"plan,omitzero"`
	// Hold is the daemon's hold on new calls as it hands the loop over
	// (a spent daily budget; nil: none); SignalHold changes it.
	Hold     *loop.Hold `json:"hold,omitempty"`
	Snapshot *Snapshot  `json:"snapshot,omitempty"`
	Adrift   bool       `json:"adrift,omitempty"`
	// Sight is what the last look at the files saw: the daemon's when it
	// starts the workflow (nil: none yet, the first call looks).
	Sight *engine.Sight `json:"sight,omitempty"`
	// Seq is the status's count of changes (Status.Seq).
	Seq int `json:"seq,omitempty"`
	// Gate says the daemon shows and decides what the calls ask a person
	// inside themselves (the gate's ask and approve): the calls get the
	// gate. Grants are the task's "allow for this task" decisions so far,
	// Asks the items asked so far (their ids count on).
	Gate   bool         `json:"gate,omitempty"`
	Grants []gate.Grant `json:"grants,omitempty"`
	Asks   int          `json:"asks,omitempty"`
}

// Handover says where a pinned session's working tree is published.
type Handover struct {
	// Remote is the tree's git remote (a name, or a URL without a secret).
	Remote string `json:"remote"`
	// After is how long a call waits for its host before a worker with
	// `--takeover` runs it from the last snapshot.
	After time.Duration `json:"after"`
}

// Snapshot is a working tree published after a call (gitx.Publish).
type Snapshot struct {
	URL    string `json:"url"`
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
	// RC is the SHA-256 of the .ralphrc the call ran with, trusted on its
	// worker ("": none): a worker taking the tree over runs it only if the
	// tree's .ralphrc is still that one.
	RC string `json:"rc,omitempty"`
}

// TakeoverSuffix names, after the workflow's queue, the queue of the agent
// calls whose host stopped answering: workers with `--takeover` poll it.
const TakeoverSuffix = ".takeover"

// AccountQueue is, after the workflow's queue, the queue of the agent
// calls under account: `ralph worker --accounts` polls it for each account
// the worker holds.
func AccountQueue(queue, account string) string { return queue + ".account." + account }

// Output is how a task's loop ended.
type Output struct {
	Reason   reason.Reason  `json:"reason"`
	Message  string         `json:"message"`
	ExitCode int            `json:"exit_code"`
	State    loop.State     `json:"state"`
	Records  []loop.Metrics `json:"records,omitempty"`
	// Host and Dir are where the session's calls ran last (Status).
	Host string `json:"host,omitempty"`
	Dir  string `json:"dir,omitempty"`
}

// Status is the query's answer: the loop as it is now.
type Status struct {
	// Seq counts the changes of the status (the watch update's answer
	// comes once it is past the one asked for); it goes on across
	// continue-as-new.
	Seq   int        `json:"seq,omitempty"`
	State loop.State `json:"state"`
	// Records are the last iterations' records, oldest first.
	Records []loop.Metrics `json:"records,omitempty"`
	// Activity is "executing", "waiting: KIND", "paused", "question" or
	// "stopped"; WaitUntil the end of a timed wait.
	Activity  string    `json:"activity"`
	WaitUntil time.Time `json:"wait_until,omitzero"`
	// Host is the queue the session's calls go to ("" any worker's) and
	// Dir its working tree there: they change when a worker takes the
	// tree over.
	Host string `json:"host,omitempty"`
	Dir  string `json:"dir,omitempty"`
	// Asked is the loop whose questions (State.Last.Questions) the
	// workflow waits to have answered, while Activity is "question".
	Asked int `json:"asked,omitempty"`
	// Message says why the loop waits for a person.
	Message string `json:"message,omitempty"`
	// Pending are what the running call waits on inside itself, oldest
	// first: the daemon shows them and hands back the decisions.
	Pending []GateItem `json:"pending,omitempty"`
}

// ActivityQuestion is Status.Activity while the loop waits for a person.
const ActivityQuestion = "question"

// Resume is the resume signal: the person answered the questions asked at
// loop Asked (the answer is in the task file, which the agent reads) or
// asked for more loops. A resume for another loop's questions is stale and
// ignored.
type Resume struct {
	Asked int `json:"asked"`
	// MaxLoops is the budget of the run the answer starts: the task's
	// loops left (0: the one the workflow started with).
	MaxLoops int    `json:"max_loops,omitempty"`
	By       string `json:"by,omitempty"`
}

// IterateInput is one agent call.
type IterateInput struct {
	TaskID   string     `json:"task_id"`
	Session  string     `json:"session"`
	Dir      string     `json:"dir"`
	TaskFile string     `json:"task_file"`
	Prompt   string     `json:"prompt"`
	Agent    int        `json:"agent"`
	State    loop.State `json:"state"`
	// AgentSession is State.Session's id, for a worker from before State
	// held it; a call scheduled by such a workflow has it only here.
	AgentSession string `json:"agent_session,omitempty"`
	// Confined says the agent runs in the sandbox (a request's session).
	Confined bool `json:"confined,omitempty"`
	// Push, when set, is the remote the tree is published to after the
	// call, at Ref.
	Push string `json:"push,omitempty"`
	Ref  string `json:"ref,omitempty"`
	// From is the snapshot to take the tree over from: the session's host
	// stopped answering.
	From *Snapshot `json:"from,omitempty"`
	// Vouched is the .ralphrc the session's trees have run with (Snapshot.RC),
	// which a tree a worker took over may run with too.
	Vouched string `json:"vouched,omitempty"`
	// Look says the call looks at the files first (engine.Look) and is
	// made only if it sees what the workflow decided with, Seen (nil: the
	// workflow has not seen them yet); otherwise it returns what it saw,
	// unspent. A workflow from before the look-first version sets neither.
	Look bool          `json:"look,omitempty"`
	Seen *engine.Sight `json:"seen,omitempty"`
	// Account is the account the call runs under ("": the worker's own
	// login of the agent): the worker's own setting of that name.
	Account string `json:"account,omitempty"`
	// MaxBudgetUSD caps what the call may spend (the daemon's allowance
	// left; 0: no cap), for an agent that takes a cap.
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty"`
	// Gate: the call gets the gate, whose asks go to its workflow (the
	// gate update).
	Gate bool `json:"gate,omitempty"`
	// Status is the workflow's status as the call begins, with only the
	// records folded since the last call's (versionCallStatus; nil before
	// it): the daemon reads it from the history it follows instead of
	// asking the status query. The worker does not read it.
	Status *Status `json:"status,omitempty"`
	// Before names the snapshot the last call the workflow folded took
	// after it (that call's IterateOutput.After; "": none): the worker that
	// keeps it starts this call from it instead of asking git again.
	Before string `json:"before,omitempty"`
}

// IterateOutput is what a call returns: the iteration's measurement and
// where the session's tree is now.
type IterateOutput struct {
	loop.Iteration
	Snapshot *Snapshot `json:"snapshot,omitempty"`
	// Host and Dir are the queue and the tree of the worker that took the
	// tree over, which the session's calls go to from now on.
	Host string `json:"host,omitempty"`
	Dir  string `json:"dir,omitempty"`
	// Sight is what the call saw of the files (IterateInput.Look): after
	// the agent ran, or, when the call is Unspent, instead of running it.
	Sight   *engine.Sight `json:"sight,omitempty"`
	Unspent bool          `json:"unspent,omitempty"`
	// After names the snapshot this worker took after the call and keeps
	// for the session's next call (IterateInput.Before; "": none kept).
	After string `json:"after,omitempty"`
}

// VerifyInput is one Verify activity: where the session's tree is and how
// its settings are to be read (as Iterate reads them).
type VerifyInput struct {
	TaskID   string `json:"task_id"`
	Session  string `json:"session"`
	Dir      string `json:"dir,omitempty"`
	Confined bool   `json:"confined,omitempty"`
	Vouched  string `json:"vouched,omitempty"`
}

// ErrConfig is the error type of an iteration no retry can fix (an agent
// that cannot be built or started): the workflow fails at once.
const ErrConfig = "ralph.config"
