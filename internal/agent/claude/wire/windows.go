package wire

import (
	"time"

	"ralph/internal/jsonscan"
)

// usedWindow is what a rate_limit_event tells of one usage window.
type usedWindow struct {
	kind     string
	used     float64 // 0–1; negative: not said
	resetsAt time.Time
}

// windowsUsed reads the usage windows a rate_limit_event's rate_limit_info
// tells of: the one it is about (rateLimitType, with its utilization when
// given; a rejection uses it up) and each of unifiedWindows, which are
// the later word on a kind. An event without a kind tells of none.
func windowsUsed(raw []byte) []usedWindow {
	var out []usedWindow
	put := func(w usedWindow) {
		if w.kind == "" {
			return
		}
		for i := range out {
			if out[i].kind == w.kind {
				out[i] = w
				return
			}
		}
		out = append(out, w)
	}
	top, unified := readWindow(raw)
	_, top.kind, _ = rateLimitInfo(raw)
	put(top)
	for _, w := range unified {
		put(w)
	}
	return out
}

// readWindow reads one window's object: its utilization and resetsAt and,
// on rate_limit_info itself, its unifiedWindows by kind.
func readWindow(raw []byte) (w usedWindow, unified []usedWindow) {
	w.used = -1
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Object {
		return w, nil
	}
	status := ""
	_ = s.Object(func(k []byte) error {
		switch string(k) {
		case "utilization":
			if s.Peek() != jsonscan.Number {
				return nil // a null is not a zero
			}
			if u, err := s.Number(); err == nil && u >= 0 {
				w.used = min(u, 1)
			}
		case "resetsAt":
			if r, err := s.Number(); err == nil && r > 0 {
				w.resetsAt = epoch(r)
			}
		case "status":
			status, _ = s.String()
		case "unifiedWindows":
			if s.Peek() != jsonscan.Object {
				return nil
			}
			return s.Object(func(kind []byte) error {
				one, err := s.Raw()
				if err != nil {
					return err
				}
				u, _ := readWindow(one)
				u.kind = string(kind)
				unified = append(unified, u)
				return nil
			})
		}
		return nil
	})
	if w.used < 0 && status == "rejected" {
		w.used = 1
	}
	return w, unified
}

// epoch reads a reset time given in seconds or milliseconds.
func epoch(v float64) time.Time {
	if v > 1e12 {
		v /= 1000
	}
	return time.Unix(int64(v), 0).UTC()
}
