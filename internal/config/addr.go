package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// The checks of the addresses in the configuration: each returns why the value
// is wrong, or "" when it is fine. They only look at the text: nothing is
// resolved or dialled, so a bad address stops the start before any migration
// or connection.

// listenAddrProblem checks a listen address: host:port with a port from 0 to
// 65535 (0: any free port); the host may be empty (every interface), an IP
// address or a host name.
func listenAddrProblem(v string) string {
	const want = "must be host:port (such as 127.0.0.1:8080 or :8080), with a port from 0 to 65535"
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return want
	}
	if p := portProblem(port); p != "" {
		return p
	}
	if host != "" && !validHost(host) {
		return fmt.Sprintf("%q is not an IP address or a host name; %s", host, want)
	}
	return ""
}

// postgresURLProblem checks a PostgreSQL URL: postgres:// or postgresql://
// with a host (or a host= parameter, for a Unix socket directory).
func postgresURLProblem(v string) string {
	const want = "must be a PostgreSQL URL such as postgres://user:password@127.0.0.1:5432/stagedoor?sslmode=disable"
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Sprintf("%s (%v)", want, unwrapURLError(err))
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return want
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return want + ": it names no host"
	}
	if u.Host == "" {
		return "" // a Unix socket: host=/var/run/postgresql
	}
	// A URL may list several hosts (host1:5432,host2:5432); check each.
	for _, hp := range strings.Split(u.Host, ",") {
		if p := hostPortProblem(hp, true); p != "" {
			return p
		}
	}
	return ""
}

// redisURLProblem checks REDIS_URL: a redis:// or rediss:// URL with a host, a
// unix:// URL with a path, or comma-separated host:port addresses of a Redis
// Cluster (each may start with redis://), as internal/conn reads them.
func redisURLProblem(v string) string {
	const want = "must be a URL such as redis://127.0.0.1:6379/0, or comma-separated host:port addresses of a Redis Cluster"
	if strings.Contains(v, ",") {
		n := 0
		for _, addr := range strings.Split(v, ",") {
			addr = strings.TrimPrefix(strings.TrimSpace(addr), "redis://")
			if addr == "" {
				continue
			}
			n++
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return fmt.Sprintf("%q is not host:port; %s", addr, want)
			}
			if p := hostPortProblem(addr, false); p != "" {
				return p
			}
		}
		if n == 0 {
			return want
		}
		return ""
	}
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Sprintf("%s (%v)", want, unwrapURLError(err))
	}
	switch u.Scheme {
	case "redis", "rediss":
		if u.Host == "" {
			return want + ": it names no host"
		}
		if p := hostPortProblem(u.Host, true); p != "" {
			return p
		}
		if db := strings.Trim(u.Path, "/"); db != "" {
			if n, err := strconv.Atoi(db); err != nil || n < 0 {
				return fmt.Sprintf("the database %q is not a number; %s", db, want)
			}
		}
		return ""
	case "unix":
		if u.Path == "" {
			return "a unix:// URL needs the socket's path, such as unix:///run/redis/redis.sock"
		}
		return ""
	}
	return want
}

// httpURLProblem checks an http:// or https:// base URL with a host.
func httpURLProblem(v string) string {
	const want = "must be an http:// or https:// URL with a host, such as http://127.0.0.1:8090"
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Sprintf("%s (%v)", want, unwrapURLError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return want
	}
	if u.Host == "" {
		return want + ": it names no host"
	}
	return hostPortProblem(u.Host, true)
}

// hostPortProblem checks the host and the port (when there is one, or always
// when portOptional is false) of a URL's host part or a host:port address.
func hostPortProblem(hostport string, portOptional bool) string {
	host, port := hostport, ""
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	} else if !portOptional {
		return fmt.Sprintf("%q is not host:port", hostport)
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return "it names no host"
	}
	if !validHost(host) {
		return fmt.Sprintf("%q is not an IP address or a host name", host)
	}
	if port != "" || !portOptional {
		if p := portProblem(port); p != "" {
			return p
		}
	}
	return ""
}

// portProblem checks a port number; service names (":http") are refused.
func portProblem(port string) string {
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("the port %q is not a number from 0 to 65535", port)
	}
	return ""
}

// validHost is an IP address (with an IPv6 zone, maybe) or a host name of
// letters, digits, hyphens, dots and underscores (container names have them).
func validHost(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if len(host) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// unwrapURLError drops url.Error's repetition of the whole value (which may
// hold a password): the problem alone.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// redactURL is v with any password replaced by "xxxxx"; a value that does not
// parse as a URL but may hold credentials is hidden whole.
func redactURL(v string) string {
	if u, err := url.Parse(v); err == nil {
		return u.Redacted()
	}
	if strings.Contains(v, "@") {
		return "(hidden: it may hold a password)"
	}
	return v
}
