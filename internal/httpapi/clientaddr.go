package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr is the address a request comes from: the TCP peer, or, when the
// peer is a trusted proxy, the rightmost X-Forwarded-For entry that is not itself
// a trusted proxy. Entries left of that one were written by the client and are
// never believed. A malformed entry ends the walk at the last trusted hop.
func clientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := parseHostAddr(r.RemoteAddr)
	if !isTrusted(peer, trusted) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	last := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return last
		}
		a = a.Unmap()
		if !isTrusted(a, trusted) {
			return a
		}
		last = a
	}
	return last
}

// addressKey is what a per-address limit is keyed on: an IPv4 address, or the
// /64 of an IPv6 address, since one subscriber is routinely given a whole /64.
func addressKey(a netip.Addr) string {
	if a.Is6() {
		return netip.PrefixFrom(a, 64).Masked().String()
	}
	return a.String()
}

func parseHostAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
