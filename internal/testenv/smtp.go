package testenv

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	_ "embed" // the server's script
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

//go:embed smtpd.py
var smtpdScript []byte

// SMTPOptions say how a test's mail server behaves.
type SMTPOptions struct {
	TLS      bool   // offer STARTTLS, with a certificate that RootCAs trusts
	Implicit bool   // smtps: TLS from the first byte (implies TLS)
	User     string // require a login (over TLS) with User and Password
	Password string
	Reject   []string // recipients refused for good (550)
	Defer    []string // recipients put off (451)
}

// SMTPServer is a real SMTP server process of one test's own: Debian's
// aiosmtpd (python3-aiosmtpd; scripts/ensure-mail.sh installs it, and make
// test runs that) run by smtpd.py, delivering what it takes into a maildir.
// It can be stopped (killed) and started again on its port, as a mail server
// that goes away and comes back.
type SMTPServer struct {
	Addr    string // 127.0.0.1:port
	Maildir string
	// RootCAs trusts the server's certificate (with TLS or Implicit).
	RootCAs *x509.CertPool
	t       testing.TB
	o       SMTPOptions
	python  string
	args    []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// StartSMTP starts a mail server on a free port of 127.0.0.1 and kills it
// when the test ends. A port taken meanwhile by another test is given up for
// another.
func StartSMTP(t testing.TB, o SMTPOptions) *SMTPServer {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "smtpd.py")
	if err := os.WriteFile(script, smtpdScript, 0o644); err != nil {
		t.Fatal(err)
	}
	s := &SMTPServer{t: t, o: o, python: aiosmtpdPython(t), Maildir: filepath.Join(dir, "maildir")}
	args := []string{script, "--maildir", s.Maildir}
	if o.TLS || o.Implicit {
		cert, key, pool := testCertificate(t, dir)
		s.RootCAs = pool
		args = append(args, "--cert", cert, "--key", key)
		if o.Implicit {
			args = append(args, "--smtps")
		}
	}
	if o.User != "" {
		args = append(args, "--user", o.User, "--password", o.Password)
	}
	for _, a := range o.Reject {
		args = append(args, "--reject", a)
	}
	for _, a := range o.Defer {
		args = append(args, "--defer", a)
	}
	s.args = args
	for attempt := 1; ; attempt++ {
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
		err := s.start()
		if err == nil {
			break
		}
		if attempt == 5 {
			t.Fatalf("testenv: mail server: %v", err)
		}
	}
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's STAGEDOOR_SMTP_URL: smtp:// or smtps://, with the login
// when it requires one.
func (s *SMTPServer) URL() string {
	u := url.URL{Scheme: "smtp", Host: s.Addr}
	if s.o.Implicit {
		u.Scheme = "smtps"
	}
	if s.o.User != "" {
		u.User = url.UserPassword(s.o.User, s.o.Password)
	}
	return u.String()
}

// Start starts the server again on its port, after Stop, and waits until it
// listens; the messages it took before are still in its maildir.
func (s *SMTPServer) Start() {
	s.t.Helper()
	var err error
	if !Poll(10*time.Second, 50*time.Millisecond, func() bool { err = s.start(); return err == nil }) {
		s.t.Fatalf("testenv: mail server again on %s: %v", s.Addr, err)
	}
}

// start runs the server and waits for its "ready"; it fails when it exits first.
func (s *SMTPServer) start() error {
	cmd := exec.Command(s.python, append(s.args, "--listen", s.Addr)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.python, err)
	}
	exited := make(chan struct{})
	ready := make(chan bool, 1)
	go func() {
		r := bufio.NewReader(out)
		line, _ := r.ReadString('\n')
		ready <- line == "ready\n"
		_, _ = io.Copy(io.Discard, r) // until the process exits
	}()
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case ok := <-ready:
		if ok {
			s.mu.Lock()
			s.cmd, s.exited = cmd, exited
			s.mu.Unlock()
			return nil
		}
	case <-time.After(10 * time.Second):
	}
	_ = cmd.Process.Kill()
	<-exited
	return fmt.Errorf("the mail server did not listen on %s: %s", s.Addr, stderr.String())
}

// Stop kills the server (SIGKILL: a server that dies, not one that says
// goodbye) and waits for it; stopping a stopped server does nothing.
func (s *SMTPServer) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
	default:
		_ = cmd.Process.Kill()
		<-exited
	}
}

// Received reads every message the server took, in the order it took them:
// the maildir's, with the server's X-Test-* fields (see smtpd.py).
func (s *SMTPServer) Received(t testing.TB) []*mail.Message {
	t.Helper()
	var out []*mail.Message
	for _, sub := range []string{"new", "cur"} {
		files, _ := filepath.Glob(filepath.Join(s.Maildir, sub, "*"))
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := mail.ReadMessage(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("testenv: the maildir's %s is no message: %v", f, err)
			}
			out = append(out, m)
		}
	}
	arrived := func(m *mail.Message) int64 {
		n, _ := strconv.ParseInt(m.Header.Get("X-Test-Arrived"), 10, 64)
		return n
	}
	slices.SortStableFunc(out, func(a, b *mail.Message) int { return int(arrived(a) - arrived(b)) })
	return out
}

var aiosmtpdTool = &debianTool{
	Package:    "python3-aiosmtpd",
	Candidates: []string{"/usr/bin/python3", "python3"},
	Works:      func(path string) bool { return exec.Command(path, "-c", "import aiosmtpd").Run() == nil },
}

// aiosmtpdPython finds a python3 that has aiosmtpd (Debian's is
// /usr/bin/python3; a python3 of pyenv on PATH has not), installing
// python3-aiosmtpd first where it can (as root, with apt-get).
func aiosmtpdPython(t testing.TB) string {
	t.Helper()
	return aiosmtpdTool.need(t, t.Fatalf, "testenv: no python3 with aiosmtpd, the tests' mail server (%s): "+
		"install Debian's python3-aiosmtpd (bash scripts/ensure-mail.sh does, as root; make test runs it)")
}

// testCertificate writes a self-signed certificate for 127.0.0.1 and
// localhost and its key into dir, and returns their paths and a pool that
// trusts it.
func testCertificate(t testing.TB, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "stagedoor test mail server"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
