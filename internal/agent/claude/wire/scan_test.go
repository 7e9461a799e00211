package wire

import "testing"

// mayHoldFailure is whether reading a user event found that a tool result
// in its message may have failed (members.mayFail).
func mayHoldFailure(msg []byte) bool {
	var m members
	if !m.parse([]byte(`{"type":"user","message":` + string(msg) + `}`)) {
		return false
	}
	return m.mayFail
}

// A user message is scanned again only when a tool result in it can have
// failed.
func TestMayHoldFailure(t *testing.T) {
	for msg, want := range map[string]bool{
		`{"role":"user","content":[{"type":"tool_result","content":"x","is_error":true}]}`:                    true,
		`{"role":"user","content":[{"type":"tool_result","content":"x","is_error" : true}]}`:                  true,
		`{"role":"user","content":[{"type":"tool_result","content":"x","is_error":"true"}]}`:                  true,
		`{"role":"user","content":[{"type":"tool_result","content":"x","is_error":false}]}`:                   false,
		`{"role":"user","content":[{"type":"tool_result","content":"x"}]}`:                                    false,
		`{"role":"user","content":[{"type":"tool_result","content":"{\"is_error\":true}","is_error":false}]}`: false,
		`{"role":"user","content":[{"type":"tool_result","content":"\"is_error\"","is_error":false}]}`:        false,
		`{"role":"user","content":[{"type":"tool_result","content":"x","is_error":false},{"is_error":true}]}`: true,
		`{"role":"user","content":[{"type":"tool_result","name":"is_error","content":"x","is_error":	true}]}`: true,
	} {
		if got := mayHoldFailure([]byte(msg)); got != want {
			t.Errorf("mayHoldFailure(%s) = %v, want %v", msg, got, want)
		}
	}
}
