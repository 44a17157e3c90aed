package mail

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"net/textproto"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Server is the mail server messages are sent through: STAGEDOOR_SMTP_URL,
// read by ParseServerURL. Its String never shows the password.
type Server struct {
	implicitTLS    bool // smtps://: TLS from the first byte
	host, port     string
	user, password string
}

// ParseServerURL reads smtp://host:port (STARTTLS when the server offers it)
// or smtps://host:port (TLS from the start), each with user:password@ when the
// server asks for a login (sent only over TLS, or to localhost). Without a
// port: 25 and 465. Its errors never repeat the URL, which may hold a password.
func ParseServerURL(raw string) (Server, error) {
	const want = "must be smtp://host:port or smtps://host:port, with user:password@ when the server asks for a login"
	u, err := url.Parse(raw)
	if err != nil {
		return Server{}, errors.New(want)
	}
	s := Server{host: u.Hostname(), port: u.Port()}
	switch u.Scheme {
	case "smtp":
		s.port = cmp.Or(s.port, "25")
	case "smtps":
		s.implicitTLS, s.port = true, cmp.Or(s.port, "465")
	default:
		return Server{}, errors.New(want)
	}
	if s.host == "" {
		return Server{}, errors.New(want + ": it names no host")
	}
	if n, err := strconv.Atoi(s.port); err != nil || n < 1 || n > 65535 {
		return Server{}, errors.New(want + ": the port must be a number from 1 to 65535")
	}
	if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return Server{}, errors.New(want + ": nothing after host:port")
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.password, _ = u.User.Password()
		if s.user == "" {
			return Server{}, errors.New(want + ": the login's user is empty")
		}
	}
	return s, nil
}

// String is the server's URL with its password hidden.
func (s Server) String() string {
	u := url.URL{Scheme: "smtp", Host: net.JoinHostPort(s.host, s.port)}
	if s.implicitTLS {
		u.Scheme = "smtps"
	}
	if s.user != "" {
		u.User = url.UserPassword(s.user, "xxxxx")
		if s.password == "" {
			u.User = url.User(s.user)
		}
	}
	return u.String()
}

// scrub is an error's text with the password taken out (no error of net/smtp
// repeats it; this keeps it so), at most 500 bytes: what the log and the
// outbox's last_error may show.
func (s Server) scrub(err error) string {
	msg := err.Error()
	if s.password != "" {
		msg = strings.ReplaceAll(msg, s.password, "xxxxx")
	}
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return msg
}

// session is one SMTP connection, greeted, secured and logged in.
type session struct {
	c       *smtp.Client
	conn    net.Conn // the TCP connection: its deadline bounds every exchange
	timeout time.Duration
}

// open connects and greets the server, starts TLS (smtps://, or STARTTLS
// when an smtp:// server offers it) and logs in when the URL has a user;
// each step within timeout.
func (s Server) open(ctx context.Context, tlsConfig *tls.Config, timeout time.Duration) (*session, error) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(s.host, s.port))
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(timeout))
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if tlsConfig != nil {
		cfg = tlsConfig.Clone()
	}
	cfg.ServerName = s.host
	var over net.Conn = conn
	if s.implicitTLS {
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		over = tc
	}
	c, err := smtp.NewClient(over, s.host)
	if err != nil {
		conn.Close()
		return nil, err
	}
	sess := &session{c: c, conn: conn, timeout: timeout}
	if err := s.greet(c, cfg); err != nil {
		sess.close()
		return nil, err
	}
	return sess, nil
}

func (s Server) greet(c *smtp.Client, cfg *tls.Config) error {
	if err := c.Hello(helloName()); err != nil {
		return err
	}
	if ok, _ := c.Extension("STARTTLS"); ok && !s.implicitTLS {
		if err := c.StartTLS(cfg); err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
	}
	if s.user == "" {
		return nil
	}
	if ok, _ := c.Extension("AUTH"); !ok {
		return errors.New("the server offers no login (AUTH), and STAGEDOOR_SMTP_URL has a user")
	}
	if err := c.Auth(smtp.PlainAuth("", s.user, s.password, s.host)); err != nil {
		return fmt.Errorf("login as %s: %w", s.user, err)
	}
	return nil
}

// helloName is the name this host gives in EHLO.
func helloName() string {
	if h, err := os.Hostname(); err == nil && h != "" && !strings.ContainsAny(h, " \r\n") {
		return h
	}
	return "localhost"
}

// failure is how a try of a message failed.
type failure string

const (
	unreachable failure = "unreachable" // the server, not the message: no connection, a lost one, a refused session
	deferred    failure = "deferred"    // the server said 4xx to this message: try it again later
	rejected    failure = "rejected"    // the server said 5xx to this message: never
)

// send sends one message from from to to, within the session's timeout, and
// returns nil once the server answered 250 to its DATA: it has the message.
func (sess *session) send(from, to string, msg []byte) (failure, error) {
	_ = sess.conn.SetDeadline(time.Now().Add(sess.timeout))
	if err := sess.c.Mail(from); err != nil {
		return unreachable, fmt.Errorf("MAIL FROM: %w", err) // the server refuses the sender: a setting, not the message
	}
	if err := sess.c.Rcpt(to); err != nil {
		return classify(err), fmt.Errorf("RCPT TO: %w", err)
	}
	w, err := sess.c.Data()
	if err != nil {
		return classify(err), fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return unreachable, fmt.Errorf("DATA: %w", err)
	}
	if err := w.Close(); err != nil { // reads the server's answer to the message
		return classify(err), fmt.Errorf("the message: %w", err)
	}
	return "", nil
}

// classify tells a message's failure from the server's: an SMTP reply of 4xx
// or 5xx is about the message (but 421: the server is closing), anything else
// (a broken connection, a timeout) about the server.
func classify(err error) failure {
	var reply *textproto.Error
	switch {
	case !errors.As(err, &reply), reply.Code == 421:
		return unreachable
	case reply.Code >= 500:
		return rejected
	}
	return deferred
}

// reset readies the session for the next message after one failed (RSET).
func (sess *session) reset() error {
	_ = sess.conn.SetDeadline(time.Now().Add(sess.timeout))
	return sess.c.Reset()
}

// close ends the session politely (QUIT), or cuts it.
func (sess *session) close() {
	_ = sess.conn.SetDeadline(time.Now().Add(sess.timeout))
	if err := sess.c.Quit(); err != nil {
		sess.conn.Close()
	}
}
