package wire

import (
	"ralph/internal/activity"
	"ralph/internal/jsonscan"
)

// stats reads the token counts of the stream's result (flat) or of the
// json output (per model), and the json output's tool totals.
func (sc *Scanner) stats(raw []byte) {
	if len(raw) == 0 {
		return
	}
	st, _ := readStats(raw)
	u := activity.Usage{InputTokens: st.input, OutputTokens: st.output, CacheReadInputTokens: st.cached}
	sc.f.ToolTotals(toolTotals(st.tools))
	if u.InputTokens == 0 && u.OutputTokens == 0 && len(st.models) > 0 {
		modelTokens(st.models, &u)
	}
	sc.f.Usage(u, true)
}

// stats are the members of a stats object: the stream result's flat
// counts, and the json output's per-model counts and tool totals, raw.
type stats struct {
	input, output, cached, durationMS, toolCalls int64
	models, tools                                []byte
}

// readStats reads a stats object; ok is false when raw is none. Only the
// live view shows the time and the count of calls: they are read leniently,
// so that one of them malformed does not end the reading of the counts the
// analyzer needs.
func readStats(raw []byte) (st stats, ok bool) {
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Object {
		return st, false
	}
	_ = s.Object(func(k []byte) error {
		var n *int64
		read := s.Number
		switch string(k) {
		case "input_tokens":
			n = &st.input
		case "output_tokens":
			n = &st.output
		case "cached":
			n = &st.cached
		case "duration_ms":
			n, read = &st.durationMS, s.LooseNumber
		case "tool_calls":
			n, read = &st.toolCalls, s.LooseNumber
		case "models":
			var err error
			st.models, err = s.Raw()
			return err
		case "tools":
			var err error
			st.tools, err = s.Raw()
			return err
		default:
			return nil
		}
		f, err := read()
		*n = int64(f)
		return err
	})
	return st, true
}

// modelTokens adds up each model's counts: flat (stream-json) or under
// "tokens" (json).
func modelTokens(raw []byte, u *activity.Usage) {
	ms := jsonscan.New(raw)
	_ = ms.Object(func([]byte) error {
		return ms.Object(func(k []byte) error {
			switch string(k) {
			case "input_tokens":
				f, _ := ms.Number()
				u.InputTokens += int64(f)
				return nil
			case "output_tokens":
				f, _ := ms.Number()
				u.OutputTokens += int64(f)
				return nil
			case "cached":
				f, _ := ms.Number()
				u.CacheReadInputTokens += int64(f)
				return nil
			}
			if string(k) != "tokens" {
				return nil
			}
			var prompt, input, cand, cached float64
			_ = ms.Object(func(k []byte) error {
				switch string(k) {
				case "prompt":
					prompt, _ = ms.Number()
				case "input":
					input, _ = ms.Number()
				case "candidates":
					cand, _ = ms.Number()
				case "cached":
					cached, _ = ms.Number()
				}
				return nil
			})
			if prompt == 0 {
				prompt = input
			}
			u.InputTokens += int64(prompt)
			u.OutputTokens += int64(cand)
			u.CacheReadInputTokens += int64(cached)
			return nil
		})
	})
}

// toolTotals reads the json output's tool totals, which name no single
// call: how many calls there were, and how many calls of a tool that
// writes files succeeded.
func toolTotals(raw []byte) (calls, writes int) {
	if len(raw) == 0 {
		return 0, 0
	}
	s := jsonscan.New(raw)
	_ = s.Object(func(k []byte) error {
		switch string(k) {
		case "totalCalls":
			f, err := s.Number()
			calls += activity.BoundedCount(f)
			return err
		case "byName":
			return s.Object(func(name []byte) error {
				edit := activity.WritesFiles(string(name))
				return s.Object(func(k []byte) error {
					if string(k) != "success" || !edit {
						return nil
					}
					f, err := s.Number()
					writes += activity.BoundedCount(f)
					return err
				})
			})
		}
		return nil
	})
	return calls, writes
}
