package daemon

import (
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	wf "ralph/internal/temporal"
)

// The daemon takes the status from an agent call's input only: a call a
// workflow from before versionCallStatus scheduled carries none (the
// daemon asks the query), and neither does a verify run.
func TestCallStatusReadsAnAgentCallsInputOnly(t *testing.T) {
	payload := func(v any) *commonpb.Payloads {
		p, err := converter.GetDefaultDataConverter().ToPayloads(v)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	told := &wf.Status{Seq: 7, Activity: "executing"}
	for _, c := range []struct {
		name     string
		activity string
		input    *commonpb.Payloads
		want     *wf.Status
	}{
		{"a call with the status", wf.ActivityIterate, payload(wf.IterateInput{TaskID: "t", Status: told}), told},
		{"a call from before the version", wf.ActivityIterate, payload(wf.IterateInput{TaskID: "t"}), nil},
		{"a verify run", wf.ActivityVerify, payload(wf.VerifyInput{TaskID: "t"}), nil},
		{"an input that is not JSON", wf.ActivityIterate, &commonpb.Payloads{Payloads: []*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("binary/plain")}, Data: []byte{1}}}}, nil},
	} {
		got := callStatus(&historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: c.activity}, Input: c.input})
		if (got == nil) != (c.want == nil) || got != nil && (got.Seq != c.want.Seq || got.Activity != c.want.Activity) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
