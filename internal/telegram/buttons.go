package telegram

import (
	"strings"

	"github.com/go-telegram/bot/models"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// Buttons under a reply or a notice offer the usual next step. Each
// carries its action, the task and the session ("stop:t3:5"): a press is
// acted on only while that task is still the session's, so an old
// button never stops a newer task.
const (
	actStop   = "stop"
	actReset  = "reset"
	actLoop10 = "loop10"
	// An approval's buttons name the pending decision too
	// ("allow:t3:5:a1"): it is decided once, whichever press comes first.
	actAllow = "allow"
	actDeny  = "deny"
	// actAllowTask allows the exact call for the rest of the task.
	actAllowTask = "allowtask"
)

// buttonMoreLoops is how many iterations "Loop 10 more" adds.
const buttonMoreLoops = 10

// maxButtonData is Telegram's limit on callback data, in bytes.
const maxButtonData = 64

type button struct{ label, data string }

type press struct{ act, taskID, session, item string }

func newButton(label, act, taskID, session string) (button, bool) {
	data := act + ":" + taskID + ":" + session
	return button{label: label, data: data}, len(data) <= maxButtonData
}

func parseButton(data string) (press, bool) {
	parts := strings.Split(data, ":")
	if len(parts) == 4 && (parts[0] == actAllow || parts[0] == actAllowTask || parts[0] == actDeny) && parts[1] != "" && parts[3] != "" && serve.ValidSessionName(parts[2]) {
		return press{act: parts[0], taskID: parts[1], session: parts[2], item: parts[3]}, true
	}
	if len(parts) != 3 || parts[1] == "" || !serve.ValidSessionName(parts[2]) {
		return press{}, false
	}
	switch parts[0] {
	case actStop, actReset, actLoop10:
		return press{act: parts[0], taskID: parts[1], session: parts[2]}, true
	}
	return press{}, false
}

// label is what a pressed button did, in words.
func (p press) label() string {
	switch p.act {
	case actStop:
		return "stop"
	case actReset:
		return "reset the breaker"
	case actAllow:
		return "allow " + p.item + " once"
	case actAllowTask:
		return "allow " + p.item + " for this task"
	case actDeny:
		return "deny " + p.item
	}
	return "loop 10 more"
}

// taskButtons are the next steps for a task in the state v is in.
func taskButtons(v serve.TaskView) []button {
	var out []button
	add := func(label, act string) {
		if b, ok := newButton(label, act, v.ID, v.Session); ok {
			out = append(out, b)
		}
	}
	switch {
	case v.State == fleet.Running || v.State == fleet.Queued:
		add("⏹ Stop", actStop)
	case v.State == fleet.Halted:
		add("🔁 Reset breaker", actReset)
	case v.State == fleet.Waiting && len(v.Questions) == 0:
		if v.LoopCount == 0 {
			add("▶ Loop 10", actLoop10)
		} else {
			add("▶ Loop 10 more", actLoop10)
		}
	}
	if v.CircuitBreaker.State == "OPEN" && v.State != fleet.Halted && !v.State.Finished() {
		add("🔁 Reset breaker", actReset)
	}
	return out
}

// noticeButtons are the next steps a notice offers.
func noticeButtons(n serve.Notice) []button {
	var b button
	var ok bool
	switch n.Kind {
	case serve.NoticeHalted:
		b, ok = newButton("🔁 Reset breaker", actReset, n.TaskID, n.Session)
	case serve.NoticeStopped:
		b, ok = newButton("▶ Loop 10 more", actLoop10, n.TaskID, n.Session)
	case serve.NoticeUsageLimit:
		b, ok = newButton("⏹ Stop", actStop, n.TaskID, n.Session)
	case serve.NoticeApproval:
		var out []button
		for _, x := range []struct{ label, act string }{{"✅ Allow once", actAllow}, {"☑️ Allow for this task", actAllowTask}, {"⛔ Deny", actDeny}} {
			if bt, ok := newButton(x.label, x.act, n.TaskID, n.Session+":"+n.Item); ok {
				out = append(out, bt)
			}
		}
		return out
	}
	if !ok {
		return nil
	}
	return []button{b}
}

// keyboard is buttons as one row of an inline keyboard (nil: none).
func keyboard(bs []button) models.ReplyMarkup {
	if len(bs) == 0 {
		return nil
	}
	row := make([]models.InlineKeyboardButton, len(bs))
	for i, b := range bs {
		row[i] = models.InlineKeyboardButton{Text: b.label, CallbackData: b.data}
	}
	return &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{row}}
}
