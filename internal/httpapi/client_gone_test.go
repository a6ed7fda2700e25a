package httpapi

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
)

// resetConn is a ResponseWriter whose writes fail as net/http's do once the
// client has reset the connection: a *net.OpError naming both ends.
type resetConn struct{ h http.Header }

func (r *resetConn) Header() http.Header { return r.h }
func (r *resetConn) WriteHeader(int)     {}
func (r *resetConn) Write([]byte) (int, error) {
	return 0, &net.OpError{Op: "write", Net: "tcp",
		Source: &net.TCPAddr{IP: net.ParseIP("10.0.0.2"), Port: 8080},
		Addr:   &net.TCPAddr{IP: net.ParseIP("203.0.113.77"), Port: 51234},
		Err:    syscall.ECONNRESET}
}

// A client that goes away while its answer is written is no server error,
// and the write's error, which names the client's address, stays out of the
// log at every level.
func TestClientGoneLeavesNoAddress(t *testing.T) {
	var logs bytes.Buffer
	s := New(Deps{Auth: stubAuth{}, Ingest: validating{}, Stats: struct{ Stats }{}, Goals: struct{ Goals }{}, Limiter: allowAll{},
		Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	func() {
		defer func() {
			if r := recover(); r != nil && r != http.ErrAbortHandler {
				panic(r)
			}
		}()
		s.Handler().ServeHTTP(&resetConn{h: http.Header{}}, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	}()
	if strings.Contains(logs.String(), "203.0.113.77") || strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("log:\n%s\nwant no error and no client address", logs.String())
	}
	if !strings.Contains(logs.String(), "answer abandoned by the client") {
		t.Errorf("log:\n%s\nwant the abandoned answer at debug level", logs.String())
	}
	if !ClientGone(&net.OpError{Op: "write", Err: syscall.EPIPE}) || ClientGone(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}) ||
		ClientGone(errors.New("write tcp")) {
		t.Error("ClientGone takes a failed dial for a client gone, or misses a failed write")
	}
}
