// Package mailer sends email through the SMTP server of TALLY_SMTP_URL with
// the standard library's net/smtp: STARTTLS (smtp://, required but to this
// host) or TLS from the start (smtps://), PLAIN authentication. It is the
// only package that speaks SMTP, as the stores are the only ones that speak
// to databases; its errors never carry the server's password.
package mailer

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Server is a parsed TALLY_SMTP_URL.
type Server struct {
	Host, Port string
	// ImplicitTLS: TLS from the first byte (smtps://); else STARTTLS.
	ImplicitTLS bool
	// Username and Password authenticate (AUTH PLAIN) when Username is set.
	Username, Password string
}

// ErrURL is how ParseURL refuses a URL; its message never quotes the URL,
// which may hold a password.
var ErrURL = errors.New("must be smtp://user:password@host:587 (STARTTLS) or smtps://user:password@host:465 (TLS), " +
	"user and password optional")

// ParseURL reads an SMTP URL: smtp://[user[:password]@]host[:port] (port
// 587 by default) or smtps://… (465). It takes no path, query or fragment.
func ParseURL(raw string) (Server, error) {
	u, err := url.Parse(raw) // its error quotes the URL: not passed on
	if err != nil || u.Opaque != "" || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return Server{}, ErrURL
	}
	s := Server{Host: u.Hostname(), Port: u.Port()}
	switch u.Scheme {
	case "smtp":
		s.Port = cmpOr(s.Port, "587")
	case "smtps":
		s.Port, s.ImplicitTLS = cmpOr(s.Port, "465"), true
	default:
		return Server{}, ErrURL
	}
	if n, err := strconv.Atoi(s.Port); err != nil || n < 1 || n > 65535 {
		return Server{}, ErrURL
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
		if s.Username == "" {
			return Server{}, ErrURL
		}
	}
	return s, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Loopback reports whether the server is on this machine: the only place
// an smtp:// server may be spoken to without STARTTLS.
func (s Server) Loopback() bool {
	if s.Host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(s.Host)
	return err == nil && ip.IsLoopback()
}

// Mailer sends messages through one server.
type Mailer struct {
	srv     Server
	from    string // the envelope sender, the bare address of From
	timeout time.Duration
	tls     *tls.Config
}

// Option adjusts a Mailer.
type Option func(*Mailer)

// WithTimeout bounds a whole exchange in place of the minute of New
// (tests of a server that never answers shorten it).
func WithTimeout(d time.Duration) Option { return func(m *Mailer) { m.timeout = d } }

// WithTLSConfig replaces the TLS configuration (tests trust their own
// certificate with it); the server name is always set from the URL.
func WithTLSConfig(c *tls.Config) Option { return func(m *Mailer) { m.tls = c.Clone() } }

// New makes a mailer for srv, sending as from (an address, validated by
// the configuration).
func New(srv Server, from string, opts ...Option) *Mailer {
	m := &Mailer{srv: srv, from: from, timeout: time.Minute, tls: &tls.Config{MinVersion: tls.VersionTLS12}}
	for _, o := range opts {
		o(m)
	}
	m.tls.ServerName = srv.Host
	return m
}

// Send delivers msg to its one recipient: connect, TLS, authenticate, MAIL,
// RCPT, DATA. The whole exchange is bounded by ctx and a minute. An error
// for which Unknown is true may hide a message the server queued.
func (m *Mailer) Send(ctx context.Context, msg Message) error {
	body, err := msg.Bytes(time.Now())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	return m.clean(m.send(ctx, msg.To, body))
}

func (m *Mailer) send(ctx context.Context, to string, body []byte) error {
	addr := net.JoinHostPort(m.srv.Host, m.srv.Port)
	var conn net.Conn
	var err error
	if m.srv.ImplicitTLS {
		conn, err = (&tls.Dialer{Config: m.tls}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return failed("connect", err)
	}
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	c, err := smtp.NewClient(conn, m.srv.Host)
	if err != nil {
		conn.Close()
		return failed("greeting", err)
	}
	defer c.Close()
	if err := c.Hello("localhost"); err != nil {
		return failed("EHLO", err)
	}
	if !m.srv.ImplicitTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(m.tls); err != nil {
				return failed("STARTTLS", err)
			}
		} else if !m.srv.Loopback() {
			return failed("STARTTLS", errors.New("the server offers no STARTTLS, and mail leaves this host only encrypted"))
		}
	}
	if m.srv.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", m.srv.Username, m.srv.Password, m.srv.Host)); err != nil {
			return failed("AUTH", err)
		}
	}
	if err := c.Mail(m.from); err != nil {
		return failed("MAIL", err)
	}
	if err := c.Rcpt(to); err != nil {
		return failed("RCPT", err)
	}
	if err := data(c, body); err != nil {
		return err
	}
	_ = c.Quit() // the message is accepted; a lost goodbye changes nothing
	return nil
}

// data hands the message over after DATA and reads the server's verdict.
// Until the final dot is written whole the server cannot have queued
// anything, so a failure up to then may be tried again, as may a reply
// that refuses it; a reply that never comes after it (a timeout, a closed
// connection, a garbled line) leaves the outcome unknown. net/smtp's own
// writer drops the error of that last write, so it is not used.
func data(c *smtp.Client, body []byte) error {
	id, err := c.Text.Cmd("DATA")
	if err != nil {
		return failed("DATA", err)
	}
	c.Text.StartResponse(id)
	_, _, err = c.Text.ReadResponse(354)
	c.Text.EndResponse(id)
	if err != nil {
		return failed("DATA", err)
	}
	w := c.Text.DotWriter()
	if _, err := w.Write(body); err != nil {
		return failed("DATA", err)
	}
	if err := w.Close(); err != nil { // the final dot did not leave whole
		return failed("DATA", err)
	}
	if _, _, err := c.Text.ReadResponse(250); err != nil {
		e := failed("DATA", err)
		e.Unknown = e.Code == 0 // a reply code is the server's answer; anything else is none
		return e
	}
	return nil
}

// Unknown reports whether err is a send whose outcome is unknown: the
// message was handed over whole and no reply came, so the server may have
// queued it and sending it again may deliver it twice. The senders of
// automatic mail keep such a message as sent and log it; a failure for
// which Unknown is false left nothing at the server and may be tried again.
func Unknown(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Unknown
}

// clean drops the password from an error's text, should a server or a
// library ever echo it.
func (m *Mailer) clean(err error) error {
	if err == nil || m.srv.Password == "" || !strings.Contains(err.Error(), m.srv.Password) {
		return err
	}
	out := &Error{Step: "send", err: errors.New(strings.ReplaceAll(err.Error(), m.srv.Password, "[redacted]"))}
	var e *Error
	if errors.As(err, &e) {
		*out = *e
		out.err = errors.New(strings.ReplaceAll(e.err.Error(), m.srv.Password, "[redacted]"))
	}
	return out
}

// Error is a failed send: the step that failed and the server's reply
// code (0 when it did not answer one). Its text may quote the server's
// reply, which can name the recipient: logs take Brief.
type Error struct {
	Step string
	Code int
	// Unknown: the message was handed over whole and no reply came (see
	// the function Unknown).
	Unknown bool
	err     error
}

func (e *Error) Error() string {
	if e.Unknown {
		return "mailer: " + e.Step + ": the message was handed over and no reply came, so it may have been queued: " + e.err.Error()
	}
	return "mailer: " + e.Step + ": " + e.err.Error()
}

func (e *Error) Unwrap() error { return e.err }

// Brief is the step and the reply code, nothing the server wrote.
func (e *Error) Brief() string {
	if e.Unknown {
		return e.Step + " no reply"
	}
	if e.Code == 0 {
		return e.Step
	}
	return e.Step + " " + strconv.Itoa(e.Code)
}

// failed wraps err as the failure of step.
func failed(step string, err error) *Error {
	e := &Error{Step: step, err: err}
	var tp *textproto.Error
	if errors.As(err, &tp) {
		e.Code = tp.Code
	}
	return e
}
