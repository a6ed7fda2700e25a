package app_test

import (
	"bytes"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// redisLink is a TCP proxy to Redis that holds back, for a while, every
// script call naming a batch's applied set (prefix + "applied:"): the
// sessions' compare-and-set. A batch's states are then read at once and
// written late, so another instance can move them on in between. The link
// counts the compare-and-set calls it held and the applied-set lookups
// (SMISMEMBER), which a batch makes only when it computes visitors again,
// because another instance moved their states on after it read them (or
// when it is replayed after a restart).
type redisLink struct {
	hold          time.Duration
	applied       []byte
	sets, lookups atomic.Int64
}

// newRedisLink puts a link in front of cfg's Redis for the test's duration
// and points cfg at it.
func newRedisLink(t *testing.T, cfg *configT, hold time.Duration) *redisLink {
	t.Helper()
	u, err := url.Parse(cfg.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &redisLink{hold: hold, applied: []byte(cfg.RedisPrefix + "applied:")}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	target := u.Host
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, client, server)
			mu.Unlock()
			wg.Go(func() { l.forward(server, client); client.Close(); server.Close() })
			wg.Go(func() { copyConn(client, server); client.Close(); server.Close() })
		}
	})
	u.Host = ln.Addr().String()
	cfg.RedisURL = u.String()
	return l
}

// forward copies a client's commands to Redis, holding the compare-and-set
// calls. go-redis writes command names in lower case, each as a bulk
// string of its own.
func (l *redisLink) forward(server, client net.Conn) {
	applied := &wordCount{word: l.applied}
	evalsha, eval := &wordCount{word: []byte("\r\nevalsha\r\n")}, &wordCount{word: []byte("\r\neval\r\n")}
	lookup := &wordCount{word: []byte("\r\nsmismember\r\n")}
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			p := buf[:n]
			scripts, lookups := evalsha.add(p)+eval.add(p), lookup.add(p)
			if applied.add(p) > 0 {
				l.lookups.Add(int64(lookups))
				if scripts > 0 {
					l.sets.Add(int64(scripts))
					time.Sleep(l.hold)
				}
			}
			if _, err := server.Write(p); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func copyConn(dst, src net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// wordCount counts a word in a stream read in pieces, including where a
// read splits it.
type wordCount struct {
	word, tail []byte
}

func (w *wordCount) add(p []byte) int {
	window := append(w.tail, p...)
	n := bytes.Count(window, w.word)
	w.tail = append(w.tail[:0:0], window[max(0, len(window)-len(w.word)+1):]...)
	return n
}
