package serve

import (
	"testing"
	"time"
)

// blocking is a notifier whose deliveries hang until released, as a chat
// whose API does not answer.
type blocking struct{ release chan struct{} }

func (b blocking) Notify(Notice) { <-b.release }

// A stalled notifier delays neither the daemon (Notify returns at once,
// with its lock held) nor the other notifiers.
func TestAStalledNotifierDelaysNothing(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	stalled := blocking{release: make(chan struct{})}
	var got notices
	logf := func(string, ...any) {}
	ns := Notifiers{detach(stalled, logf, stop), detach(&got, logf, stop)}

	began := time.Now()
	for _, k := range []string{NoticeQuestion, NoticeDone, NoticeHalted} {
		ns.Notify(Notice{Kind: k, TaskID: "t1"})
	}
	if d := time.Since(began); d > time.Second {
		t.Fatalf("Notify blocked for %s behind a stalled notifier", d)
	}
	if k := got.kindsOnce("question,done,halted"); k != "question,done,halted" {
		t.Errorf("the other notifier heard %q while one stalled", k)
	}
	close(stalled.release)
}

// Stopped, a notifier hands on what was queued before it ends; a stalled
// one does not hold the daemon's exit past the limit.
func TestNotifiersDrainWhenStopped(t *testing.T) {
	stop := make(chan struct{})
	var got notices
	n := detach(&got, func(string, ...any) {}, stop)
	for i := 0; i < 100; i++ {
		n.Notify(Notice{Kind: NoticeDone})
	}
	close(stop)
	waitNotifiers(Notifiers{n}, 5*time.Second)
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.list) != 100 {
		t.Errorf("%d of 100 notices handed on before the end", len(got.list))
	}

	stuck := detach(blocking{release: make(chan struct{})}, func(string, ...any) {}, make(chan struct{}))
	stuck.Notify(Notice{Kind: NoticeDone})
	began := time.Now()
	waitNotifiers(Notifiers{stuck}, 200*time.Millisecond)
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("a stalled notifier held the exit for %s", d)
	}
}
