package httpapi

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	tests := []struct {
		name, peer string
		xff        []string
		trusted    []netip.Prefix
		want       string
	}{
		{"no proxies: the peer", "203.0.113.9:5555", nil, nil, "203.0.113.9"},
		{"untrusted peer's XFF is ignored", "203.0.113.9:5555", []string{"198.51.100.1"}, trusted, "203.0.113.9"},
		{"trusted peer: rightmost untrusted entry", "10.0.0.2:80", []string{"1.1.1.1, 198.51.100.7"}, trusted, "198.51.100.7"},
		{"skips trusted hops", "10.0.0.2:80", []string{"1.1.1.1, 198.51.100.7, 10.0.0.3"}, trusted, "198.51.100.7"},
		{"several header lines", "10.0.0.2:80", []string{"1.1.1.1", "198.51.100.7"}, trusted, "198.51.100.7"},
		{"trusted peer, no header", "10.0.0.2:80", nil, trusted, "10.0.0.2"},
		{"malformed entry stops at last trusted", "10.0.0.2:80", []string{"1.1.1.1, garbage, 10.0.0.3"}, trusted, "10.0.0.3"},
		{"IPv4-mapped peer", "[::ffff:203.0.113.9]:80", nil, trusted, "203.0.113.9"},
		{"IPv6 peer", "[2001:db8::1]:80", nil, trusted, "2001:db8::1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.peer
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientAddr(r, tt.trusted).String(); got != tt.want {
				t.Errorf("clientAddr = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAddressKeyGroupsIPv6By64(t *testing.T) {
	a := addressKey(netip.MustParseAddr("2001:db8:1:2:aaaa::1"))
	b := addressKey(netip.MustParseAddr("2001:db8:1:2:bbbb::9"))
	c := addressKey(netip.MustParseAddr("2001:db8:1:3::1"))
	if a != b || a == c || a != "2001:db8:1:2::/64" {
		t.Errorf("keys %s %s %s: want one /64 for the first two, another for the third", a, b, c)
	}
	if k := addressKey(netip.MustParseAddr("203.0.113.9")); k != "203.0.113.9" {
		t.Errorf("IPv4 key = %s", k)
	}
}
