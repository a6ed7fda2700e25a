// Package faultproxy is a TCP proxy on loopback that breaks a connection to
// a real server (ClickHouse, Postgres, Redis) on purpose, for the fault
// tests and the fault soak: it can take the server away, or let a request
// reach it while holding back the answer — how a commit whose
// acknowledgement never arrives looks from the client.
package faultproxy

import (
	"bytes"
	"net"
	"sync"
	"time"
)

// Proxy forwards connections to a target server until broken.
type Proxy struct {
	Addr   string
	target string
	ln     net.Listener

	mu     sync.Mutex
	down   bool
	conns  map[*proxyConn]bool
	hold   []byte // client bytes that arm a hold on their connection
	held   *proxyConn
	heldCh chan struct{}
	// inspect makes each new connection's inspector (see Inspect)
	inspect func() func(piece []byte) time.Duration
}

type proxyConn struct {
	client, server net.Conn
	// release is closed when the held answers may flow again
	release chan struct{}
	// inspect sees each piece the client sends and says how long it waits
	inspect func(piece []byte) time.Duration
	// matched: the client sent the pattern; armed: it sent more after
	// it, and the server's answers are held from now on
	matched, armed bool
}

// Start listens on a free loopback port and forwards to target until Close.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[*proxyConn]bool{}}
	go p.accept()
	return p, nil
}

// Close stops listening and cuts every connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Down()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		pc := &proxyConn{client: c, server: s, release: make(chan struct{})}
		p.mu.Lock()
		p.conns[pc] = true
		if p.inspect != nil {
			pc.inspect = p.inspect()
		}
		p.mu.Unlock()
		go p.upstream(pc)
		go p.downstream(pc)
	}
}

// upstream copies client → server, arming a hold when the client's bytes
// contain the Hold pattern.
func (p *Proxy) upstream(pc *proxyConn) {
	defer p.closeConn(pc)
	buf := make([]byte, 64<<10)
	var tail []byte // the end of the previous read, for patterns split across reads
	for {
		n, err := pc.client.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if pc.matched && p.held == pc && !pc.armed {
				pc.armed = true
				close(p.heldCh)
			} else if p.hold != nil && p.held == nil {
				window := append(tail, buf[:n]...)
				if bytes.Contains(window, p.hold) {
					pc.matched, p.held = true, pc
				}
				if k := len(p.hold); len(window) > k {
					tail = append(tail[:0], window[len(window)-k:]...)
				} else {
					tail = append(tail[:0], window...)
				}
			}
			p.mu.Unlock()
			if pc.inspect != nil {
				time.Sleep(pc.inspect(buf[:n]))
			}
			if _, werr := pc.server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// downstream copies server → client, except while the connection is held.
func (p *Proxy) downstream(pc *proxyConn) {
	defer p.closeConn(pc)
	buf := make([]byte, 64<<10)
	for {
		n, err := pc.server.Read(buf)
		if n > 0 {
			p.mu.Lock()
			armed := pc.armed
			p.mu.Unlock()
			if armed {
				<-pc.release
			}
			if _, werr := pc.client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) closeConn(pc *proxyConn) {
	pc.client.Close()
	pc.server.Close()
	p.mu.Lock()
	delete(p.conns, pc)
	p.mu.Unlock()
}

// Down cuts every connection and refuses new ones until Up.
func (p *Proxy) Down() {
	p.mu.Lock()
	p.down = true
	conns := make([]*proxyConn, 0, len(p.conns))
	for pc := range p.conns {
		conns = append(conns, pc)
	}
	p.mu.Unlock()
	for _, pc := range conns {
		pc.client.Close()
		pc.server.Close()
	}
}

// Up lets connections through again.
func (p *Proxy) Up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// Inspect shows every piece that clients of connections opened from now on
// send to an inspector of their connection's own (made by newInspector),
// before it is forwarded; the piece waits as long as the inspector says.
func (p *Proxy) Inspect(newInspector func() func(piece []byte) time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inspect = newInspector
}

// Hold arms a trap on the first connection whose client sends bytes
// containing pattern: the server still answers that request (for a
// ClickHouse INSERT, with the table's header), but whatever the client sends
// next reaches the server while the server's answers to it stop at the
// proxy, until Release or Drop. For an INSERT that is the data: ClickHouse
// stores it, the client never hears so. The returned channel is closed when
// the trap springs (the client sent more after the pattern).
func (p *Proxy) Hold(pattern string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold, p.held, p.heldCh = []byte(pattern), nil, make(chan struct{})
	return p.heldCh
}

// Release delivers the held answers and disarms the trap.
func (p *Proxy) Release() {
	p.mu.Lock()
	pc := p.disarm()
	p.mu.Unlock()
	if pc != nil {
		close(pc.release)
	}
}

// Drop closes the held connection without delivering its answers: the
// server did the work, the client never hears of it.
func (p *Proxy) Drop() {
	p.mu.Lock()
	pc := p.disarm()
	p.mu.Unlock()
	if pc != nil {
		pc.client.Close()
		pc.server.Close()
		close(pc.release)
	}
}

func (p *Proxy) disarm() *proxyConn {
	pc := p.held
	p.hold, p.held = nil, nil
	if pc != nil {
		pc.matched, pc.armed = false, false
	}
	return pc
}
