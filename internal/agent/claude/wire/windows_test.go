package wire

import (
	"reflect"
	"strconv"
	"testing"
	"time"
)

func TestWindowsUsed(t *testing.T) {
	reset := time.Date(2026, 11, 21, 0, 0, 58, 0, time.UTC)
	week := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name, info string
		want       []usedWindow
	}{
		{"routine, nothing said", `{"status":"allowed"}`, nil},
		{"allowed with its utilization, reset in seconds", `{"status":"allowed_warning","resetsAt":1795219258,"rateLimitType":"seven_day","utilization":0.83}`,
			[]usedWindow{{"seven_day", 0.83, time.Unix(1795219258, 0).UTC()}}},
		{"a rejection uses the window up, reset in milliseconds", `{"status":"rejected","resetsAt":1795219258000,"rateLimitType":"five_hour"}`,
			[]usedWindow{{"five_hour", 1, time.Unix(1795219258, 0).UTC()}}},
		{"allowed without a utilization: not said", `{"status":"allowed","rateLimitType":"five_hour"}`,
			[]usedWindow{{"five_hour", -1, time.Time{}}}},
		{"unified windows are the later word, each kind once", `{"status":"allowed","rateLimitType":"five_hour","utilization":0.1,"unifiedWindows":{"five_hour":{"utilization":0.42,"resetsAt":` +
			itoa(reset.Unix()) + `,"status":"allowed"},"seven_day":{"utilization":0.9,"resetsAt":` + itoa(week.Unix()) + `}}}`,
			[]usedWindow{{"five_hour", 0.42, reset}, {"seven_day", 0.9, week}}},
		{"the real CLI's rejection", `{"status":"rejected","resetsAt":1795219258,"rateLimitType":"five_hour","overageStatus":"rejected","isUsingOverage":false,"unifiedWindows":{"five_hour":{"utilization":1,"resetsAt":1795219258,"status":"rejected"}}}`,
			[]usedWindow{{"five_hour", 1, time.Unix(1795219258, 0).UTC()}}},
		{"over 1 is used up, a bad figure not said", `{"rateLimitType":"five_hour","utilization":1.7,"unifiedWindows":{"seven_day":{"utilization":"lots"}}}`,
			[]usedWindow{{"five_hour", 1, time.Time{}}, {"seven_day", -1, time.Time{}}}},
		{"not an object", `"rejected"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := windowsUsed([]byte(tt.info)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("windowsUsed(%s)\n got %+v\nwant %+v", tt.info, got, tt.want)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
