package telegram

import (
	"context"
	"sync"
)

// mailboxes run the bot's work one job at a time per session (STYLE.md:
// one mailbox per task), so a session's commands, answers and notices
// happen in the order they came, while a slow one (a cancel waits for its
// agent to end) holds up no other session. Work that is about no session
// goes to the mailbox "".
type mailboxes struct {
	ctx   context.Context
	logf  func(string, ...any)
	mu    sync.Mutex
	boxes map[string]chan func(context.Context)
	shut  bool // wait has begun: no new mailbox
	wg    sync.WaitGroup
}

const mailboxSize = 64

func newMailboxes(ctx context.Context, logf func(string, ...any)) *mailboxes {
	return &mailboxes{ctx: ctx, logf: logf, boxes: map[string]chan func(context.Context){}}
}

// post queues job, waiting while the mailbox is full; after the end it
// drops it.
func (m *mailboxes) post(key string, job func(context.Context)) {
	m.mu.Lock()
	ch, ok := m.boxes[key]
	if !ok {
		if m.shut || m.ctx.Err() != nil {
			m.mu.Unlock()
			return
		}
		ch = make(chan func(context.Context), mailboxSize)
		m.boxes[key] = ch
		m.wg.Add(1)
		go m.run(key, ch)
	}
	m.mu.Unlock()
	select {
	case ch <- job:
	case <-m.ctx.Done():
	}
}

func (m *mailboxes) run(key string, ch chan func(context.Context)) {
	defer m.wg.Done()
	for {
		select {
		case <-m.ctx.Done():
			return
		case job := <-ch:
			m.do(key, job)
		}
	}
}

// do runs one job; a bug in one must not take the daemon and its loops
// down with it.
func (m *mailboxes) do(key string, job func(context.Context)) {
	defer func() {
		if r := recover(); r != nil {
			m.logf("a job of session %q failed: %v", key, r)
		}
	}()
	job(m.ctx)
}

// wait returns once every mailbox has stopped (after the end).
func (m *mailboxes) wait() {
	m.mu.Lock()
	m.shut = true
	m.mu.Unlock()
	m.wg.Wait()
}
