package onsale

import (
	"fmt"
	"net"
)

// The clients' own addresses on 127/8, which Linux routes to the loopback as
// a whole: buyers from 127.16.0.1 on, one each (254 a /24, skipping .0 and
// .255), bots from 127.200.0.1 on, shared, the pollers' connections from
// 127.100.0.1 on, one address each, and the organizer 127.9.0.1.
// 127.0.0.1 is left to the servers and their proxies (STAGEDOOR_TRUSTED_PROXIES).
var (
	buyerBase     = [2]byte{16, 0}
	botBase       = [2]byte{200, 0}
	pollerBase    = [2]byte{100, 0}
	organizerAddr = net.IPv4(127, 9, 0, 1)
)

// hostAddr is the i-th address from base: 254 hosts a /24.
func hostAddr(base [2]byte, i int) net.IP {
	block := int(base[0])<<8 | int(base[1])
	block += i / 254
	return net.IPv4(127, byte(block>>8), byte(block), byte(i%254+1))
}

// buyerAddr is buyer i's address.
func buyerAddr(i int) net.IP { return hostAddr(buyerBase, i) }

// pollerAddr is the address of the pollers' i-th connection.
func pollerAddr(i int) net.IP { return hostAddr(pollerBase, i) }

// botAddr is the address bot j shares with every bot j' = j mod shared.
func botAddr(j, shared int) net.IP { return hostAddr(botBase, j%max(shared, 1)) }

// checkSourceAddrs makes sure this machine lets a client dial from a 127/8
// address other than 127.0.0.1, as Linux does; elsewhere (macOS) it says to
// turn SourceAddrs off.
func checkSourceAddrs() error {
	l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: buyerAddr(0)})
	if err != nil {
		return fmt.Errorf("onsale: this machine does not route %s to the loopback (%w): turn the clients' own addresses off (-source-addrs=false)",
			buyerAddr(0), err)
	}
	return l.Close()
}
