// Package smtptest is an SMTP server for tests, in the test's process: it
// speaks enough of the protocol for net/smtp (EHLO, AUTH PLAIN, MAIL, RCPT,
// DATA, RSET, NOOP, QUIT), keeps what it receives, and can refuse messages
// or leave them unanswered on demand. Plain TCP on loopback, so no
// STARTTLS.
package smtptest

import (
	"encoding/base64"
	"io"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"
)

// Received is a message the server accepted.
type Received struct {
	From string
	To   []string
	// Data is the message as sent (headers and body, CRLF line ends,
	// dot-stuffing undone).
	Data string
}

// Server is a running test SMTP server.
type Server struct {
	// Addr is its host:port on 127.0.0.1.
	Addr           string
	user, password string
	ln             net.Listener

	mu       sync.Mutex
	received []Received
	refuse   int
	silence  int
	sessions sync.WaitGroup
	stop     chan struct{}
}

// Start serves until the test ends. With a user, clients must
// authenticate (AUTH PLAIN) with user and password before MAIL.
func Start(t testing.TB, user, password string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String(), user: user, password: password, ln: ln, stop: make(chan struct{})}
	go s.accept()
	t.Cleanup(func() {
		ln.Close()
		close(s.stop)
		s.sessions.Wait()
	})
	return s
}

// Refuse makes the server answer the next n messages' data with 451 (a
// temporary failure): the client must try again later.
func (s *Server) Refuse(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = n
}

// Silence makes the server keep the next n messages, as one that queued
// them, and never answer their data: the connection stays open and silent
// until the client hangs up (or the test ends), as when a reply is lost.
func (s *Server) Silence(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.silence = n
}

// Received is every message accepted so far (those left unanswered too).
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

func (s *Server) accept() {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.sessions.Add(1)
		go func() {
			defer s.sessions.Done()
			defer conn.Close()
			s.session(textproto.NewConn(conn), conn)
		}()
	}
}

// session answers one client until QUIT or an error.
func (s *Server) session(c *textproto.Conn, conn net.Conn) {
	authed := s.user == ""
	var from string
	var to []string
	reply := func(lines ...string) bool {
		for i, l := range lines {
			sep := " "
			if i < len(lines)-1 {
				sep = "-"
			}
			if err := c.PrintfLine("%s%s%s", l[:3], sep, l[4:]); err != nil {
				return false
			}
		}
		return true
	}
	if !reply("220 smtptest ready") {
		return
	}
	for {
		line, err := c.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		ok := true
		switch strings.ToUpper(verb) {
		case "EHLO":
			ok = reply("250 smtptest", "250 AUTH PLAIN")
		case "HELO", "NOOP":
			ok = reply("250 ok")
		case "RSET":
			from, to = "", nil
			ok = reply("250 ok")
		case "AUTH":
			authed = s.auth(arg)
			if authed {
				ok = reply("235 authenticated")
			} else {
				ok = reply("535 authentication failed")
			}
		case "MAIL":
			if !authed {
				ok = reply("530 authenticate first")
				continue
			}
			from, to = address(arg), nil
			ok = reply("250 ok")
		case "RCPT":
			to = append(to, address(arg))
			ok = reply("250 ok")
		case "DATA":
			if from == "" || len(to) == 0 {
				ok = reply("503 MAIL and RCPT first")
				continue
			}
			if !reply("354 go on") {
				return
			}
			data, err := io.ReadAll(c.DotReader())
			if err != nil {
				return
			}
			answer := s.keep(Received{From: from, To: to, Data: strings.ReplaceAll(string(data), "\n", "\r\n")})
			if answer == "" {
				s.silent(conn)
				return
			}
			ok = reply(answer)
			from, to = "", nil
		case "QUIT":
			reply("221 bye")
			return
		default:
			ok = reply("502 not implemented")
		}
		if !ok {
			return
		}
	}
}

// keep stores a message unless it is to be refused, and says the reply:
// none for a message to be left unanswered.
func (s *Server) keep(m Received) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse > 0 {
		s.refuse--
		return "451 try again later"
	}
	s.received = append(s.received, m)
	if s.silence > 0 {
		s.silence--
		return ""
	}
	return "250 queued"
}

// silent reads and drops whatever the client sends until it hangs up or
// the test ends.
func (s *Server) silent(conn net.Conn) {
	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, conn)
		close(gone)
	}()
	select {
	case <-gone:
	case <-s.stop:
		conn.Close()
		<-gone
	}
}

// auth checks an AUTH PLAIN command's initial response.
func (s *Server) auth(arg string) bool {
	mech, resp, _ := strings.Cut(arg, " ")
	if !strings.EqualFold(mech, "PLAIN") {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(resp)
	if err != nil {
		return false
	}
	parts := strings.Split(string(raw), "\x00")
	return len(parts) == 3 && parts[1] == s.user && parts[2] == s.password
}

// address is the <address> of "FROM:<a> …" or "TO:<a>".
func address(arg string) string {
	_, rest, _ := strings.Cut(arg, "<")
	a, _, _ := strings.Cut(rest, ">")
	return a
}
