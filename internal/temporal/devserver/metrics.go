package devserver

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Counters are the dev server's request counters, summed by name and
// operation ("name/operation"): the requests its services made of each
// other ("client_requests/…": the workflow tasks its workers completed,
// the heartbeats, the history reads) and of its database
// ("persistence_requests/…"). What an iteration costs the server is read
// from them (scripts/temporalload, and the tests that guard its figures).
type Counters map[string]float64

// WriteOps are the persistence operations that change the database: each
// is a write transaction of the dev server's SQLite file.
var WriteOps = []string{"CreateWorkflowExecution", "UpdateWorkflowExecution", "ConflictResolveWorkflowExecution",
	"SetWorkflowExecution", "DeleteWorkflowExecution", "DeleteCurrentWorkflowExecution", "AppendHistoryNodes", "DeleteHistoryBranch",
	"ForkHistoryBranch", "TrimHistoryBranch", "CreateTasks", "CompleteHistoryTask", "RangeCompleteHistoryTasks", "CompleteTasksLessThan",
	"UpdateTaskQueue", "CreateTaskQueue", "UpdateTaskQueueUserData", "UpdateShard", "AssertShardOwnership", "CompleteTask", "UpsertClusterMembership"}

// ReadCounters reads the counters from the metrics endpoint at addr
// (HOST:PORT); raw, when not nil, gets the whole page too.
func ReadCounters(addr string, raw io.Writer) (Counters, error) {
	hc := http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics at %s: %s", addr, resp.Status)
	}
	var body io.Reader = resp.Body
	if raw != nil {
		body = io.TeeReader(resp.Body, raw)
	}
	c := Counters{}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), "{")
		if !ok || (name != "client_requests" && name != "persistence_requests") {
			continue
		}
		_, op, ok := strings.Cut(rest, `operation="`)
		if !ok {
			continue
		}
		op, _, _ = strings.Cut(op, `"`)
		i := strings.LastIndexByte(rest, ' ')
		if i < 0 {
			continue
		}
		n, err := strconv.ParseFloat(rest[i+1:], 64)
		if err != nil {
			continue
		}
		c[name+"/"+op] += n
	}
	return c, sc.Err()
}

// Since is what c counted after before.
func (c Counters) Since(before Counters) Counters {
	d := Counters{}
	for k, v := range c {
		if n := v - before[k]; n != 0 {
			d[k] = n
		}
	}
	return d
}

// Writes is how many of the database requests counted changed it.
func (c Counters) Writes() float64 {
	var n float64
	for _, op := range WriteOps {
		n += c["persistence_requests/"+op]
	}
	return n
}
