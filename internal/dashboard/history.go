package dashboard

import (
	"errors"
	"net/http"
	"strconv"

	"ralph/internal/fleet"
	"ralph/internal/serve"
	"ralph/internal/store"
)

// The history pages: a session's tasks, one task (finished ones too) with
// its iterations, and one iteration with its log. They read the daemon's
// history (serve.Daemon.History, Show, IterationLogOf) and are not live:
// what they show is past, and the live task page links to them.

type sessionData struct {
	page
	Session string
	Tasks   []serve.TaskView
	// Current is the session's live task, when it has one not finished.
	Current *serve.TaskView
	// Free lets the page offer a new task on the session.
	Free  []string
	Error string
	// StartProblem is what was wrong with the new-task form (unused here:
	// the form answers on the overview).
	StartProblem string
}

// sessionPage is GET /session/{session}: every task the session kept.
func (d *Dashboard) sessionPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("session")
	known := false
	if sessions, err := d.src.Sessions(); err == nil {
		for _, s := range sessions {
			known = known || s.Name == name
		}
	}
	if !known {
		d.refuse(w, r, http.StatusNotFound, "There is no session "+name+".")
		return
	}
	data := sessionData{Session: name}
	tasks, err := d.src.History(serve.TaskFilter{Session: name})
	if err != nil {
		data.Error = "The tasks could not be read: " + store.Redact(err.Error())
	}
	data.Tasks = tasks
	busy := false
	for i, t := range tasks {
		if !t.State.Finished() {
			busy = true
			if data.Current == nil {
				data.Current = &tasks[i]
			}
		}
	}
	if !busy {
		data.Free = []string{name}
	}
	data.page = d.pageFor(r, "Session "+name, "", "")
	d.render(w, http.StatusOK, "session.html", data)
}

type detailData struct {
	page
	serve.TaskDetail
	// Live says the task is its session's current one and not finished:
	// its live page shows it as it runs.
	Live bool
}

// detailPage is GET /tasks/{id}: a task as it is kept, finished or not.
func (d *Dashboard) detailPage(w http.ResponseWriter, r *http.Request) {
	rec, err := d.src.Show(r.PathValue("id"))
	if err != nil {
		d.historyRefusal(w, r, err, "The task")
		return
	}
	data := detailData{TaskDetail: rec, Live: !rec.State.Finished()}
	data.page = d.pageFor(r, rec.Title+" — "+rec.ID, "", "")
	d.render(w, http.StatusOK, "detail.html", data)
}

type iterationData struct {
	page
	serve.IterationLog
}

// iterationPage is GET /tasks/{id}/iterations/{n}: one iteration's
// receipt and its log as `ralph logs --iteration N` renders it.
func (d *Dashboard) iterationPage(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		d.refuse(w, r, http.StatusNotFound, "There is no iteration "+r.PathValue("n")+".")
		return
	}
	il, err := d.src.IterationLogOf(r.PathValue("id"), n)
	if err != nil {
		d.historyRefusal(w, r, err, "The iteration")
		return
	}
	data := iterationData{IterationLog: il}
	data.page = d.pageFor(r, "Iteration "+strconv.Itoa(n)+" of "+il.Task.ID, "", "")
	d.render(w, http.StatusOK, "iteration.html", data)
}

func (d *Dashboard) historyRefusal(w http.ResponseWriter, r *http.Request, err error, what string) {
	var fe *fleet.Error
	if errors.As(err, &fe) && fe.Code == fleet.NotFound {
		d.refuse(w, r, http.StatusNotFound, fe.Msg)
		return
	}
	d.refuse(w, r, http.StatusInternalServerError, what+" could not be read: "+store.Redact(err.Error()))
}
