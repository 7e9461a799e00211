package temporal

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"ralph/internal/serve"
)

// frontend is a Temporal frontend as far as dialling goes: a gRPC
// WorkflowService over TLS that wants a client certificate of its CA and
// notes what each caller presented.
type frontend struct {
	workflowservice.UnimplementedWorkflowServiceServer
	mu      sync.Mutex
	auth    []string
	clients []string
}

func (f *frontend) GetSystemInfo(ctx context.Context, _ *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	f.auth = append(f.auth, md.Get("authorization")...)
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.PeerCertificates) > 0 {
			f.clients = append(f.clients, ti.State.PeerCertificates[0].Subject.CommonName)
		}
	}
	return &workflowservice.GetSystemInfoResponse{}, nil
}

// pki writes a CA, a server certificate for 127.0.0.1 and a client
// certificate as PEM files in dir.
type pki struct {
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	dir    string
	server tls.Certificate
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &pki{ca: ca, caKey: key, dir: t.TempDir()}
	p.write(t, "ca.pem", "CERTIFICATE", der)
	certPEM, keyPEM := p.issue(t, "frontend", x509.ExtKeyUsageServerAuth)
	if p.server, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM = p.issue(t, "ralph-worker", x509.ExtKeyUsageClientAuth)
	os.WriteFile(filepath.Join(p.dir, "client.pem"), certPEM, 0o600)
	os.WriteFile(filepath.Join(p.dir, "client.key"), keyPEM, 0o600)
	return p
}

func (p *pki) write(t *testing.T, name, typ string, der []byte) {
	if err := os.WriteFile(filepath.Join(p.dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (p *pki) issue(t *testing.T, cn string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		KeyUsage: x509.KeyUsageDigitalSignature, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// The daemon and the workers reach a cluster that wants mTLS and an API
// key through the real SDK: the CA verifies the server, the client
// certificate and the key reach it, and a connection short of either
// is refused.
func TestDialWithTLSAndAnAPIKey(t *testing.T) {
	p := newPKI(t)
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{p.server},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})))
	fe := &frontend{}
	workflowservice.RegisterWorkflowServiceServer(srv, fe)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)

	const key = "tcld-api-key-do-not-log"
	full := Conn{Address: ln.Addr().String(), Namespace: "ns", CA: filepath.Join(p.dir, "ca.pem"),
		Cert: filepath.Join(p.dir, "client.pem"), Key: filepath.Join(p.dir, "client.key"), APIKey: key}
	c, err := Dial(full, "test", nil)
	if err != nil {
		t.Fatalf("mTLS and API key: %v", err)
	}
	c.Close()
	fe.mu.Lock()
	if !slices.Contains(fe.auth, "Bearer "+key) || !slices.Contains(fe.clients, "ralph-worker") {
		t.Errorf("the frontend saw authorization %q and client certificates %q", fe.auth, fe.clients)
	}
	fe.mu.Unlock()

	noCert := full
	noCert.Cert, noCert.Key = "", ""
	noCA := full
	noCA.CA = ""
	halfPair := full
	halfPair.Key = ""
	for name, conn := range map[string]Conn{"no client certificate": noCert, "the system's roots": noCA, "a certificate without its key": halfPair} {
		c, err := Dial(conn, "test", nil)
		if err == nil {
			c.Close()
			t.Errorf("%s: connected", name)
			continue
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("%s: the error shows the API key: %v", name, err)
		}
	}
}

// The API key is the daemon's secret: no agent gets it.
func TestAPIKeyIsWithheldFromAgents(t *testing.T) {
	if !slices.Contains(serve.DaemonSecrets, EnvAPIKey) {
		t.Errorf("serve.DaemonSecrets lacks %s", EnvAPIKey)
	}
}

func TestCompressOnlyAcrossANetwork(t *testing.T) {
	for _, c := range []struct {
		address string
		want    bool
	}{
		{"127.0.0.1:7233", false},
		{"127.5.6.7:7233", false},
		{"[::1]:7233", false},
		{"localhost:7233", false},
		{"10.0.0.5:7233", true},
		{"ns.acct.tmprl.cloud:7233", true},
		{"temporal.internal:7233", true},
		{"[2001:db8::1]:7233", true},
		{"127.0.0.1", false},
	} {
		if got := compress(c.address); got != c.want {
			t.Errorf("compress(%q) = %v, want %v", c.address, got, c.want)
		}
	}
}
