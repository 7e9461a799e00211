package dashboard

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// A task waiting on two tool calls shows each with its id and its own
// three buttons; "Allow for this task" posts the approve for the rest of
// the task, "Allow once" a plain one.
func TestTaskPageDecidesEachPendingCall(t *testing.T) {
	f := fleetFixture(t)
	v := f.views["api"]
	v.State, v.Message = fleet.Waiting, "waiting: approval a3 for WebFetch"
	v.Pending = []serve.PendingItem{{ID: "a2", Kind: "approval", What: "Bash(npm <publish>)"}, {ID: "q1", Kind: "question", What: "Which?"},
		{ID: "a3", Kind: "approval", What: "WebFetch"}}
	f.views["api"] = v
	d := newTestDashboard(t, f)
	c := login(t, d)
	body := get(d, "/task/api", c).Body.String()
	for _, want := range []string{
		`id="decide-a2"`, `<code>Bash(npm &lt;publish&gt;)</code> (a2)`, `id="decide-a3"`, `<code>WebFetch</code> (a3)`,
		`<input type="hidden" name="item" value="a2"><input type="hidden" name="scope" value="task"><button type="submit">Allow for this task</button>`,
		`id="deny-why-a3"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the task page lacks %q", want)
		}
	}
	if strings.Contains(body, `id="decide-q1"`) {
		t.Error("a question is offered as a tool call to allow")
	}
	csrf := d.keys.csrf(c.Value)
	for _, tc := range []struct {
		form  url.Values
		asked string
	}{
		{url.Values{"csrf": {csrf}, "item": {"a2"}, "scope": {"task"}}, "approve api a2 for-task"},
		{url.Values{"csrf": {csrf}, "item": {"a3"}}, "approve api a3"},
	} {
		f.asked = nil
		if rec := post(d, "/task/api/approve", c, tc.form, nil); rec.Code != 303 || !slices.Contains(f.asked, tc.asked) {
			t.Errorf("%v: %d, asked %q; want %q", tc.form, rec.Code, f.asked, tc.asked)
		}
	}
}
