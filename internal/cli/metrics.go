package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"ralph/internal/httpcap"
	"ralph/internal/serve"
)

// listenMetrics serves h as GET /metrics on a listener of its own at addr
// until ctx ends; the returned channel says how the server ended. It takes
// no token — a scraper rarely carries one — so the address should be one
// only the scraper reaches; who names the command in its lines.
func listenMetrics(ctx context.Context, addr string, h http.Handler, log io.Writer, who string) (<-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := httpcap.NewServer(mux, 0, log)
	fmt.Fprintf(log, "%s: metrics on http://%s/metrics\n", who, ln.Addr())
	if !serve.Loopback(addr) {
		fmt.Fprintf(log, "%s: note: the metrics listener %s takes no token; bind it where only the scraper reaches it\n", who, addr)
	}
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	return done, nil
}

// closedErr is the end of a server that never ran.
func closedErr() <-chan error {
	c := make(chan error, 1)
	c <- nil
	return c
}
