package temporal

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// EnvAPIKey holds the API key of a Temporal Cloud namespace (or of a
// cluster that takes API keys). It is read from the environment only,
// never from a flag or a file ralph writes, and never logged; agents do not
// get it (serve.DaemonSecrets).
const EnvAPIKey = "RALPH_TEMPORAL_API_KEY"

// Conn is how the daemon and the workers reach the Temporal frontend.
type Conn struct {
	Address   string // HOST:PORT
	Namespace string // "" for "default"
	// TLS turns TLS on with the system's roots; CA, a client certificate
	// or an API key turn it on too.
	TLS bool
	// CA is a PEM file of the authorities that sign the server's
	// certificate (a private cluster's); "" trusts the system's.
	CA string
	// Cert and Key are PEM files of this process's client certificate,
	// for a cluster (or a Temporal Cloud namespace) that wants mTLS.
	Cert, Key string
	// ServerName is the name the server's certificate must carry, when it
	// is not the address's host.
	ServerName string
	// APIKey authenticates with a bearer token (EnvAPIKey).
	APIKey string
}

// ConnFromEnv is c with the API key from the environment.
func ConnFromEnv(c Conn) Conn {
	c.APIKey = os.Getenv(EnvAPIKey)
	return c
}

// tlsConfig is the TLS the connection asks for (nil: plain, unless an API
// key makes the SDK turn its default TLS on).
func (c Conn) tlsConfig() (*tls.Config, error) {
	if !c.TLS && c.CA == "" && c.Cert == "" && c.Key == "" && c.ServerName == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CA != "" {
		pem, err := os.ReadFile(c.CA)
		if err != nil {
			return nil, fmt.Errorf("--temporal-tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--temporal-tls-ca %s: no PEM certificate in it", c.CA)
		}
		cfg.RootCAs = pool
	}
	switch {
	case c.Cert != "" && c.Key != "":
		cert, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("--temporal-tls-cert/--temporal-tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case c.Cert != "" || c.Key != "":
		return nil, errors.New("--temporal-tls-cert and --temporal-tls-key go together")
	}
	return cfg, nil
}

// Dial connects to the Temporal frontend; the SDK's own log goes to w at
// warning level and above, so a worker's output stays ralph's.
func Dial(c Conn, identity string, w io.Writer) (client.Client, error) {
	if w == nil {
		w = io.Discard
	}
	tc, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	opts := client.Options{HostPort: c.Address, Namespace: c.Namespace, Identity: identity,
		ConnectionOptions: client.ConnectionOptions{TLS: tc},
		Logger:            tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))}
	if c.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(c.APIKey)
	}
	if !compress(c.Address) {
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	cl, err := client.Dial(opts)
	if err != nil {
		// The SDK's error never holds the key; the address is no secret.
		return nil, fmt.Errorf("temporal at %s: %w", c.Address, err)
	}
	return cl, nil
}

// compress reports whether the connection to the frontend at address
// should gzip what it sends (the SDK's default; the server answers in
// kind). To a frontend on this machine the bytes cost nothing to move and
// gzip costs both ends CPU for each request and answer (a profile under
// scripts/temporalload: 7% of the dev server's CPU, and the daemon's
// history reads); across a network it keeps the traffic small.
func compress(address string) bool {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	if host == "localhost" {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err != nil || !ip.IsLoopback()
}
