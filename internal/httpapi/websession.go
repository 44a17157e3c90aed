package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// The browser's session. The front end never sees a token: logging in through
// POST /v1/web/session sets two cookies the page's scripts cannot read
// (HttpOnly) and the browser sends only to this site (SameSite=Strict), and
// every route accepts the session cookie where it accepts a bearer token. A
// write authenticated by the cookie must come from this origin (sameOrigin),
// so no other site can make a logged-in browser act: the Origin header check
// OWASP recommends, on top of SameSite. API clients are unaffected: they send
// Authorization: Bearer, and no Origin.
const (
	sessionCookieName = "sd_session" // the session token, for SessionTTL
	deviceCookieName  = "sd_device"  // the device token (see auth.Device), for DeviceTTL
)

type webLoginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// webLogin serves POST /v1/web/session: a login for the browser, as POST
// /v1/login, whose session and device tokens go into cookies.
func (s *Server) webLogin(c echo.Context) error {
	var in webLoginRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	device := ""
	if ck, err := c.Cookie(deviceCookieName); err == nil {
		device = ck.Value
	}
	session, err := s.logIn(c, in.Email, in.Password, device)
	if err != nil {
		return err
	}
	secure := s.isHTTPS(c.Request())
	c.SetCookie(s.cookie(sessionCookieName, session.Token, "/", session.ExpiresAt, secure))
	c.SetCookie(s.cookie(deviceCookieName, session.DeviceToken, "/v1/web/session", session.DeviceExpiresAt, secure))
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, struct {
		Principal principalResponse `json:"principal"`
		ExpiresAt time.Time         `json:"expires_at"`
	}{principalJSON(session.Principal), session.ExpiresAt})
}

// webSessionJSON is the answer of GET /v1/web/session.
type webSessionJSON struct {
	Authenticated bool               `json:"authenticated"`
	Principal     *principalResponse `json:"principal,omitempty"`
}

// webSession serves GET /v1/web/session: whether the browser's session
// cookie is a live session, and whose. It answers 200 either way, so that a
// page asks at its start without an error for a visitor who is not logged in
// (GET /v1/me answers them 401, which a browser reports as an error). A
// cookie whose session ended (expired, logged out elsewhere) is cleared.
func (s *Server) webSession(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	token, err := s.sessionCookie(c.Request()) // a GET: never refused for its origin
	if err != nil {
		return err
	}
	if token != "" {
		p, err := s.auth.Authenticate(c.Request().Context(), token)
		switch {
		case err == nil:
			principal := principalJSON(p)
			return c.JSON(http.StatusOK, webSessionJSON{Authenticated: true, Principal: &principal})
		case errors.Is(err, errkind.Unauthorized):
			s.clearSessionCookie(c)
		default:
			return err // PostgreSQL cannot say: 503, not "logged out"
		}
	}
	return c.JSON(http.StatusOK, webSessionJSON{Authenticated: false})
}

// webLogout serves DELETE /v1/web/session: the cookie's session stops working
// on every instance, and the cookie is cleared. Without one it is 204 too.
func (s *Server) webLogout(c echo.Context) error {
	token, err := s.sessionCookie(c.Request())
	if err != nil {
		return err
	}
	if token != "" {
		if err := s.auth.Logout(c.Request().Context(), token); err != nil {
			return err
		}
	}
	s.clearSessionCookie(c)
	return c.NoContent(http.StatusNoContent)
}

// clearSessionCookie tells the browser to forget its session cookie.
func (s *Server) clearSessionCookie(c echo.Context) {
	gone := s.cookie(sessionCookieName, "", "/", time.Time{}, s.isHTTPS(c.Request()))
	gone.MaxAge = -1
	c.SetCookie(gone)
}

func (s *Server) cookie(name, value, path string, expires time.Time, secure bool) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: path, Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure}
}

// sessionCookie is the request's session cookie, or "" without one. A request
// that writes with it must come from this site: from another origin, or from
// no telling where, it is refused (403), before anything is read.
func (s *Server) sessionCookie(r *http.Request) (string, error) {
	ck, err := r.Cookie(sessionCookieName)
	if err != nil || ck.Value == "" {
		return "", nil
	}
	if !isSafeMethod(r.Method) && !s.sameOrigin(r) {
		return "", errkind.Forbiddenf("a write with the session cookie must come from this site (its Origin header); refused as a possible cross-site request")
	}
	return ck.Value, nil
}

// refuseCrossSiteWrites is the ring that refuses, with 403, any write whose
// Origin header names another site: a browser says where a request comes
// from, and a page of another site has no business writing here, logged in or
// not (a login or signup forged by another site included). API clients send no
// Origin and pass.
func (s *Server) refuseCrossSiteWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !isSafeMethod(r.Method) && r.Header.Get("Origin") != "" && !s.sameOrigin(r) {
			return errkind.Forbiddenf("cross-site request refused: Origin %q is not this site", r.Header.Get("Origin"))
		}
		return next(c)
	}
}

// sameOrigin reports whether the browser says the request comes from this
// site: its Origin is this scheme and Host, or, without an Origin, its
// Sec-Fetch-Site is same-origin. Behind a proxy, the proxy must keep the Host.
func (s *Server) sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if s.isHTTPS(r) {
		scheme = "https"
	}
	return u.Scheme == scheme && strings.EqualFold(u.Host, r.Host)
}

// isHTTPS reports whether the client reached us over HTTPS: directly, or, from
// a trusted proxy, as its X-Forwarded-Proto says.
func (s *Server) isHTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	return isTrusted(parseHostAddr(r.RemoteAddr), s.config.TrustedProxies) &&
		strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func isSafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}
