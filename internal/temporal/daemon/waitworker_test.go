package daemon

import (
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/timestamppb"

	wf "ralph/internal/temporal"
)

func TestWaitsForWorker(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(now.Add(-d)) }
	pending := func(name string, st enumspb.PendingActivityState, scheduled, next *timestamppb.Timestamp) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: name}, State: st,
			ScheduledTime: scheduled, NextAttemptScheduleTime: next}
	}
	sched, started := enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, enumspb.PENDING_ACTIVITY_STATE_STARTED
	for _, c := range []struct {
		name    string
		pending []*workflowpb.PendingActivityInfo
		want    bool
	}{
		{"none", nil, false},
		{"scheduled long ago", []*workflowpb.PendingActivityInfo{pending(wf.ActivityIterate, sched, at(time.Minute), nil)}, true},
		{"just scheduled", []*workflowpb.PendingActivityInfo{pending(wf.ActivityIterate, sched, at(time.Second), nil)}, false},
		{"started", []*workflowpb.PendingActivityInfo{pending(wf.ActivityIterate, started, at(time.Minute), nil)}, false},
		{"a retry's backoff", []*workflowpb.PendingActivityInfo{pending(wf.ActivityIterate, sched, at(time.Minute), at(-time.Second))}, false},
		{"a retry waiting", []*workflowpb.PendingActivityInfo{pending(wf.ActivityIterate, sched, at(time.Minute), at(time.Minute))}, true},
		{"a verify run", []*workflowpb.PendingActivityInfo{pending(wf.ActivityVerify, sched, at(time.Minute), nil)}, false},
	} {
		if got := waitsForWorker(c.pending, now, workerGrace); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
