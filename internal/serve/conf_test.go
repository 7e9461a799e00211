package serve

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseConf(t *testing.T) {
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	for _, tc := range []struct {
		name, in string
		want     Conf
		err      string
	}{
		{name: "empty", in: "", want: Conf{}},
		{name: "comments and blanks", in: "# ralph serve\n\n   # indented\n", want: Conf{}},
		{name: "everything", in: "LISTEN=127.0.0.1:8080\nMAX_PARALLEL=3\nSESSION=api=/src/api\nSESSION=web=/src/web\nRALPH_MAX_CALLS_PER_HOUR=60\nMAX_CONNECTIONS=200\n",
			want: Conf{Listen: "127.0.0.1:8080", MaxParallel: 3, MaxConns: 200, Sessions: []Session{{Name: "api", Dir: "/src/api"}, {Name: "web", Dir: "/src/web"}},
				Env: []EnvSetting{{Key: "RALPH_MAX_CALLS_PER_HOUR", Value: "60", Line: 5}}}},
		{name: "quotes, comments, export, CRLF", in: "export LISTEN = \"127.0.0.1:7777\"  # local\r\nTITLE_PREFIX='a # b'\nNOTE=x #y\n",
			want: Conf{Listen: "127.0.0.1:7777", Env: []EnvSetting{{Key: "TITLE_PREFIX", Value: "a # b", Line: 2}, {Key: "NOTE", Value: "x", Line: 3}}}},
		{name: "nothing is expanded", in: "GREETING=$(rm -rf /) ${HOME} `id`\n",
			want: Conf{Env: []EnvSetting{{Key: "GREETING", Value: "$(rm -rf /) ${HOME} `id`", Line: 1}}}},
		{name: "a secret marks the file", in: "TELEGRAM_BOT_TOKEN=123:abc\n",
			want: Conf{Secret: true, Env: []EnvSetting{{Key: "TELEGRAM_BOT_TOKEN", Value: "123:abc", Line: 1}}}},
		{name: "relative session dir", in: "SESSION=x=rel/dir\n", want: Conf{Sessions: []Session{{Name: "x", Dir: abs("rel/dir")}}}},
		{name: "not an assignment", in: "# ok\nlisten 127.0.0.1\n", err: "serve.conf:2: want KEY=VALUE"},
		{name: "lower-case key", in: "listen=1\n", err: "serve.conf:1: want KEY=VALUE"},
		{name: "bad max", in: "MAX_PARALLEL=zero\n", err: `serve.conf:1: MAX_PARALLEL="zero": want a whole number`},
		{name: "zero max", in: "MAX_PARALLEL=0\n", err: "want a whole number, 1 or more"},
		{name: "bad connection limit", in: "\nMAX_CONNECTIONS=lots\n", err: `serve.conf:2: MAX_CONNECTIONS="lots": want a whole number, 1 or more`},
		{name: "history days", in: "HISTORY_DAYS=7\n", want: Conf{HistoryDays: 7, HistoryDaysSet: true}},
		{name: "history kept for ever", in: "HISTORY_DAYS=0\n", want: Conf{HistoryDaysSet: true}},
		{name: "bad history days", in: "HISTORY_DAYS=-1\n", err: `serve.conf:1: HISTORY_DAYS="-1": want a whole number of days, 0 (keep every task) or more`},
		{name: "bad session", in: "SESSION=../x=/a\n", err: "serve.conf:1: SESSION: session \"../x\": a name is letters"},
		{name: "session without dir", in: "SESSION=x\n", err: "want NAME=DIR"},
		{name: "session twice", in: "SESSION=x=/a\nSESSION=x=/b\n", err: `serve.conf:2: session "x" is registered twice`},
		{name: "key twice", in: "LISTEN=a:1\n\nLISTEN=b:2\n", err: "serve.conf:3: LISTEN is set again (first on line 1)"},
		{name: "unterminated quote", in: "A=\"x\n", err: "serve.conf:1: A: unterminated \" quote"},
		{name: "text after quote", in: "A='x' y\n", err: "text after the closing quote"},
		{name: "empty listen", in: "LISTEN=\n", err: "LISTEN: want an address"},
		{name: "metrics listener", in: "METRICS_LISTEN=10.0.0.5:9477\n", want: Conf{MetricsListen: "10.0.0.5:9477"}},
		{name: "empty metrics listener", in: "\nMETRICS_LISTEN=\n", err: "serve.conf:2: METRICS_LISTEN: want an address"},
		{name: "daily budgets are settings like any other", in: "RALPH_FLEET_MAX_COST_PER_DAY=12\nBUDGET_TIMEZONE=Europe/Berlin\n",
			want: Conf{Env: []EnvSetting{{Key: "RALPH_FLEET_MAX_COST_PER_DAY", Value: "12", Line: 1}, {Key: "BUDGET_TIMEZONE", Value: "Europe/Berlin", Line: 2}}}},
		{name: "a bad budget names its line", in: "\nRALPH_SESSION_MAX_COST_PER_DAY=ten dollars\n", err: `serve.conf:2: RALPH_SESSION_MAX_COST_PER_DAY="ten dollars": want US dollars`},
		{name: "a bad account names its line", in: "# accounts\nRALPH_ACCOUNT_WORK=claude key=sk-ant-api03-secret\n", err: "serve.conf:2: RALPH_ACCOUNT_WORK: key=: want the name of the environment variable that holds the key (never the key itself)"},
		{name: "bad priorities name their line", in: "\n\nRALPH_SESSION_PRIORITIES=api:high\n", err: `serve.conf:3: RALPH_SESSION_PRIORITIES: "api:high": want SESSION:PRIORITY`},
		{name: "a bad zone names its line", in: "BUDGET_TIMEZONE=Berlin\n", err: `serve.conf:1: BUDGET_TIMEZONE="Berlin": want an IANA time zone`},
		{name: "NUL", in: "A=1\nB=\x00\n", err: "serve.conf:2: NUL byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConf("serve.conf", []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseConf(f *testing.F) {
	for _, s := range []string{"LISTEN=127.0.0.1:7777\n", "SESSION=a=/b\nSESSION=c=/d\n", "A='x' # c\n", "A=\"", "export B = 1\r\n", "\xef\xbb\xbfMAX_PARALLEL=2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConf("f", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f:") {
				t.Fatalf("error without the file and line: %v", err)
			}
			return
		}
		if c.MaxParallel < 0 {
			t.Fatalf("negative MAX_PARALLEL %d", c.MaxParallel)
		}
		for _, e := range c.Env {
			if !confKey.MatchString(e.Key) || e.Line < 1 {
				t.Fatalf("bad setting %+v", e)
			}
		}
	})
}
