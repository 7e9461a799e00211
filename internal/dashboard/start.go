package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"ralph/internal/fleet"
	"ralph/internal/store"
)

// start is POST /start, the overview's new-task form: a task on a free
// session, looped at once for up to "max" iterations (0: created only,
// waiting for a loop), in one step.
func (d *Dashboard) start(w http.ResponseWriter, r *http.Request) {
	if !d.checkPost(w, r) {
		return
	}
	c := fleet.Command{Verb: fleet.StartLoop, Session: strings.TrimSpace(r.PostForm.Get("session")),
		Title: strings.TrimSpace(r.PostForm.Get("title")), Origin: "dashboard", Who: fleet.Who{Surface: fleet.SurfaceWeb}}
	n, err := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("max")))
	switch {
	case err != nil || n < 0 || n > 10000:
		d.showStartProblem(w, r, http.StatusBadRequest, "Loop how many times? A number from 0 (start only) to 10000.")
		return
	case n == 0:
		c.Verb = fleet.Start
	}
	c.MaxLoops = n
	if err := c.Validate(); err != nil {
		d.showStartProblem(w, r, http.StatusBadRequest, "The task: "+err.Error()+".")
		return
	}
	if _, err := d.src.Do(r.Context(), c); err != nil {
		d.showStartProblem(w, r, refusalCode(err), store.Redact(err.Error()))
		return
	}
	http.Redirect(w, r, "/task/"+url.PathEscape(c.Session), http.StatusSeeOther)
}

// showStartProblem shows the overview again with what was wrong with the
// form, above it.
func (d *Dashboard) showStartProblem(w http.ResponseWriter, r *http.Request, code int, problem string) {
	data := d.overviewData("")
	data.page = d.pageFor(r, "Fleet", "overview", "/events?view=overview")
	data.StartProblem = problem
	d.render(w, code, "overview.html", data)
}

// refusalCode is the HTTP status of a command the fleet refused.
func refusalCode(err error) int {
	var fe *fleet.Error
	if !errors.As(err, &fe) {
		return http.StatusInternalServerError
	}
	switch fe.Code {
	case fleet.NotFound:
		return http.StatusNotFound
	case fleet.Invalid:
		return http.StatusBadRequest
	}
	return http.StatusConflict
}
