package account

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		key, value string
		want       Account
		err        string
	}{
		{"RALPH_ACCOUNT_WORK", "claude config=/home/me/.claude-work", Account{Name: "work", Agent: "claude", ConfigDir: "/home/me/.claude-work"}, ""},
		{"RALPH_ACCOUNT_CI_2", "codex key=CI_OPENAI_KEY sessions=api,web.v2", Account{Name: "ci_2", Agent: "codex", KeyVar: "CI_OPENAI_KEY", Sessions: []string{"api", "web.v2"}}, ""},
		{"RALPH_ACCOUNT_G", "gemini key=G_KEY", Account{Name: "g", Agent: "gemini", KeyVar: "G_KEY"}, ""},
		{"RALPH_ACCOUNT_", "claude config=/x", Account{}, "want RALPH_ACCOUNT_<NAME>"},
		{"RALPH_ACCOUNT_CLAUDE", "claude config=/x", Account{}, "an agent's name"},
		{"RALPH_ACCOUNT_W", "", Account{}, "want <agent> config=<dir>"},
		{"RALPH_ACCOUNT_W", "cursor config=/x", Account{}, `agent "cursor"`},
		{"RALPH_ACCOUNT_W", "claude config=relative/dir", Account{}, "want an absolute directory"},
		{"RALPH_ACCOUNT_W", "claude key=sk-ant-123-abc", Account{}, "never the key itself"},
		{"RALPH_ACCOUNT_W", "claude config=/x key=K", Account{}, "want one of config=<dir> and key=<VARIABLE>"},
		{"RALPH_ACCOUNT_W", "claude sessions=a", Account{}, "want one of config=<dir> and key=<VARIABLE>"},
		{"RALPH_ACCOUNT_W", "gemini config=/x", Account{}, "gemini has no config directory"},
		{"RALPH_ACCOUNT_W", "claude config=/x sessions=a,,b", Account{}, `"" is not a session's name`},
		{"RALPH_ACCOUNT_W", "claude config=/x $(rm -rf /)", Account{}, `"$(rm": want config=<dir>`},
		{"RALPH_ACCOUNT_W", "claude sk-ant-123-abcdef", Account{}, `"sk-ant…": want config=<dir>`},
	} {
		got, err := Parse(c.key, c.value)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%s=%s) = %v, want an error with %q", c.key, c.value, err, c.err)
			}
			if err != nil && strings.Contains(err.Error(), "sk-ant-123") {
				t.Errorf("the error shows the key: %v", err)
			}
			continue
		}
		if err != nil || got.Describe() != c.want.Describe() || got.Name != c.want.Name {
			t.Errorf("Parse(%s=%s) = %+v, %v; want %+v", c.key, c.value, got, err, c.want)
		}
	}
}

func TestFromEnvAndEnv(t *testing.T) {
	env := map[string]string{"WORK_KEY": "sk-secret"}
	getenv := func(k string) string { return env[k] }
	as, err := FromEnv([]string{"HOME=/h", "RALPH_ACCOUNT_B=claude key=WORK_KEY", "RALPH_ACCOUNT_A=codex config=/c"}, getenv)
	if err != nil || len(as) != 2 || as[0].Name != "a" || as[1].Name != "b" {
		t.Fatalf("FromEnv = %+v, %v", as, err)
	}
	if e := as[0].Env(getenv); len(e) != 1 || e[0] != "CODEX_HOME=/c" {
		t.Errorf("codex's env: %q", e)
	}
	if e := as[1].Env(getenv); len(e) != 1 || e[0] != "ANTHROPIC_API_KEY=sk-secret" {
		t.Errorf("claude's env: %q", e)
	}
	if strings.Contains(as[1].Describe(), "sk-secret") || KeyVars(as)[0] != "WORK_KEY" || Secrets(as, getenv)[0] != "sk-secret" {
		t.Errorf("describe %q, key vars %q", as[1].Describe(), KeyVars(as))
	}
	if _, err := FromEnv([]string{"RALPH_ACCOUNT_B=claude key=UNSET_KEY"}, getenv); err == nil || !strings.Contains(err.Error(), "RALPH_ACCOUNT_B: key=UNSET_KEY: that variable is not set") {
		t.Errorf("an unset key: %v", err)
	}
}

func TestChoose(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	as := []Account{
		{Name: "main", Agent: "claude", ConfigDir: "/m"},
		{Name: "spare", Agent: "claude", ConfigDir: "/s", Sessions: []string{"api"}},
		{Name: "x", Agent: "codex", ConfigDir: "/x"},
	}
	held := func(kv ...any) map[string]Window {
		m := map[string]Window{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = Window{Account: kv[i].(string), Until: t0.Add(kv[i+1].(time.Duration))}
		}
		return m
	}
	for _, c := range []struct {
		name, agent, session, last string
		windows                    map[string]Window
		want                       string
		free, ok                   bool
	}{
		{"the first by name", "claude", "api", "", nil, "main", true, true},
		{"the one it ran under", "claude", "api", "spare", nil, "spare", true, true},
		{"another when its own is held", "claude", "api", "main", held("main", time.Hour), "spare", true, true},
		{"a reset window is free", "claude", "api", "spare", held("spare", -time.Minute), "spare", true, true},
		{"not an account the session may not use", "claude", "web", "", held("main", time.Hour), "main", false, true},
		{"all held: the one freeing first", "claude", "api", "main", held("main", 2*time.Hour, "spare", time.Hour), "spare", false, true},
		{"another agent's account", "codex", "web", "", held("main", time.Hour), "x", true, true},
		{"no account of the agent", "gemini", "api", "", nil, "", false, false},
	} {
		a, free, ok := Choose(as, c.agent, c.session, c.last, c.windows, t0)
		if a.Name != c.want || free != c.free || ok != c.ok {
			t.Errorf("%s: Choose = %s free=%v ok=%v; want %s %v %v", c.name, a.Name, free, ok, c.want, c.free, c.ok)
		}
	}
}

func TestWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	short := Window{Account: "main", Until: t0.Add(time.Hour), Message: "5-hour"}
	long := Window{Account: "main", Until: t0.Add(72 * time.Hour), Message: "weekly"}
	if w, ch := Merge(short, true, long); !ch || w.Message != "weekly" {
		t.Errorf("a longer hold does not win: %+v", w)
	}
	if w, ch := Merge(long, true, short); ch || w.Message != "weekly" {
		t.Errorf("a shorter hold seen late frees the account early: %+v", w)
	}
	if w, ch := Merge(Window{}, false, short); !ch || w.Message != "5-hour" {
		t.Errorf("a first hold: %+v", w)
	}
	if !short.Held(t0) || short.Held(t0.Add(time.Hour)) {
		t.Error("Held: the hold ends at Until")
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, c := range []struct {
		w    Window
		zone *time.Location
		want string
	}{
		{short, time.UTC, "waiting for quota on main until 13:00 UTC"},
		{short, berlin, "waiting for quota on main until 14:00 CET"},
		{long, time.UTC, "waiting for quota on main until Mon Nov 30 12:00 UTC"},
	} {
		if got := WaitText(c.w, t0, c.zone); got != c.want {
			t.Errorf("WaitText = %q, want %q", got, c.want)
		}
	}
}
