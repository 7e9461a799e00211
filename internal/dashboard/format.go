package dashboard

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
)

// funcs are the templates' helpers; now is the dashboard's clock, so
// golden pages do not change with the time they are rendered.
func funcs(now func() time.Time) template.FuncMap {
	return template.FuncMap{
		"age":      func(t time.Time) string { return age(now().Sub(t)) },
		"clock":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
		"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"ms":       duration,
		"usd":      usd,
		"tokens":   tokens,
		"pct":      func(f float64) string { return fmt.Sprintf("%.0f%%", f*100) },
		"short":    short,
		"add":      func(a, b int) int { return a + b },
		"lower":    strings.ToLower,
		"nonzero":  func(t time.Time) bool { return !t.IsZero() },
		"breakerc": breakerClass,
		"plural": func(n int, noun string) string {
			if n == 1 {
				return "1 " + noun
			}
			return fmt.Sprintf("%d %ss", n, noun)
		},
		"hash": func(h string) string {
			if len(h) > 10 {
				return h[:10]
			}
			return h
		},
	}
}

// age is a duration as people say it: "12s", "5m", "3h", "2d".
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

func duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}

func usd(f float64) string {
	switch {
	case f == 0:
		return "$0"
	case f < 0.01:
		return fmt.Sprintf("$%.4f", f)
	}
	return fmt.Sprintf("$%.2f", f)
}

func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1e6:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// short cuts s to n runes on one line.
func short(n int, s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func breakerClass(s string) string {
	switch s {
	case "OPEN":
		return "bad"
	case "HALF_OPEN":
		return "warn"
	}
	return "ok"
}

// niceMax rounds a chart's top value up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
