package testserver

import (
	"context"
	"errors"
	"net"
	"sync"
)

// ErrCut is what a Cutter's dialer returns once the network is cut.
var ErrCut = errors.New("testserver: network cut")

// Cutter is a dialer whose connections a test can cut all at once, the way a
// network partition or a dying server would: Cut closes every connection it
// made and makes every later dial fail. Give its DialContext to a client
// (pgconn.Config.DialFunc, redis.Options.Dialer) and call Cut to break that
// client alone, without touching other clients of the same server.
type Cutter struct {
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
	d     net.Dialer
}

// DialContext dials like net.Dialer until Cut, then fails with ErrCut.
func (c *Cutter) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	cut := c.cut
	c.mu.Unlock()
	if cut {
		return nil, ErrCut
	}
	conn, err := c.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		conn.Close()
		return nil, ErrCut
	}
	c.conns = append(c.conns, conn)
	return conn, nil
}

// Cut closes every connection and refuses new ones.
func (c *Cutter) Cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}
