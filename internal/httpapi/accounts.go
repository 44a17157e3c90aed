package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

type accountRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Name     string `json:"name"`
}

type accountResponse struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

// createAccount serves POST /v1/buyers and POST /v1/organizers.
func (s *Server) createAccount(kind auth.Kind) echo.HandlerFunc {
	return func(c echo.Context) error {
		var in accountRequest
		if err := decodeJSON(c, &in); err != nil {
			return err
		}
		a, err := s.auth.Register(c.Request().Context(), kind, in.Email, in.Password, in.Name)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, accountResponse{ID: a.ID, Email: a.Email, Name: a.Name})
	}
}

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	// DeviceToken is the device_token an earlier login of this account
	// answered, if the client kept it.
	DeviceToken string `json:"device_token"`
}

type principalResponse struct {
	ID    string    `json:"id"`
	Kind  auth.Kind `json:"kind"`
	Email string    `json:"email"`
}

func principalJSON(p auth.Principal) principalResponse {
	return principalResponse{ID: p.AccountID, Kind: p.Kind, Email: p.Email}
}

// login serves POST /v1/login: the session token in the answer, for API
// clients. The checks and limits are logIn's.
func (s *Server) login(c echo.Context) error {
	var in loginRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	session, err := s.logIn(c, in.Email, in.Password, in.DeviceToken)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Token           string            `json:"token"`
		TokenType       string            `json:"token_type"`
		ExpiresAt       time.Time         `json:"expires_at"`
		Principal       principalResponse `json:"principal"`
		DeviceToken     string            `json:"device_token"`
		DeviceExpiresAt time.Time         `json:"device_expires_at"`
	}{session.Token, "Bearer", session.ExpiresAt, principalJSON(session.Principal),
		session.DeviceToken, session.DeviceExpiresAt})
}

// logIn checks the email first; then, before any password hash, the limits: a
// login presenting a live device token of this email's account is limited per
// device (login-device), any other by the client's address and the email
// together (login-address, login-email). So someone guessing at an email from
// elsewhere exhausts login-email, but never locks the owner out of a device
// they logged in from before. Then the password, and a new session.
func (s *Server) logIn(c echo.Context, rawEmail, password, deviceToken string) (auth.Session, error) {
	email, err := auth.ParseEmail(rawEmail)
	if err != nil {
		return auth.Session{}, err
	}
	if password == "" {
		return auth.Session{}, errkind.Invalidf("password is required")
	}
	if len(deviceToken) > auth.MaxDeviceTokenBytes {
		return auth.Session{}, errkind.Invalidf("device_token is longer than %d bytes; send the device_token a login answered", auth.MaxDeviceTokenBytes)
	}
	checks, err := s.loginChecks(c, email, deviceToken)
	if err != nil {
		return auth.Session{}, err
	}
	if err := s.enforce(c, checks...); err != nil {
		return auth.Session{}, err
	}
	return s.auth.Login(c.Request().Context(), email, password, deviceToken)
}

// loginChecks names the buckets a login must pass: its device's, when it
// presents a live device token of this email's account; else its address's and
// its email's.
func (s *Server) loginChecks(c echo.Context, email, deviceToken string) ([]ratelimit.Check, error) {
	if deviceToken != "" {
		device, ok, err := s.auth.KnownDevice(c.Request().Context(), deviceToken, email)
		if err != nil {
			return nil, err
		}
		if ok {
			return []ratelimit.Check{{Limit: limits.LoginDevice, Key: device.ID}}, nil
		}
	}
	return []ratelimit.Check{
		{Limit: limits.LoginAddress, Key: s.clientAddressKey(c)},
		{Limit: limits.LoginEmail, Key: email},
	}, nil
}

// logout serves POST /v1/logout: the session the request was authenticated
// with, by its bearer token or by the browser's session cookie, stops working
// on every instance; a session cookie is cleared too.
func (s *Server) logout(c echo.Context) error {
	cred, _ := c.Get(credentialKey).(credential)
	if err := s.auth.Logout(c.Request().Context(), cred.token); err != nil {
		return err
	}
	if cred.fromCookie {
		s.clearSessionCookie(c)
	}
	return c.NoContent(http.StatusNoContent)
}

// me serves GET /v1/me.
func (s *Server) me(c echo.Context) error {
	return c.JSON(http.StatusOK, principalJSON(principalOf(c)))
}

const (
	principalKey  = "principal"
	credentialKey = "credential" // the session's credential (logout ends it)
)

// credential is the session token a request was authenticated with, and
// whether it came in the session cookie rather than Authorization: Bearer.
type credential struct {
	token      string
	fromCookie bool
}

// authenticate is the authentication ring: it turns the bearer token, or the
// browser's session cookie, into a Principal in the request context, and lets
// through only the kinds given (any kind when none is given).
func (s *Server) authenticate(kinds ...auth.Kind) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			token, fromCookie := bearerToken(c.Request()), false
			if token == "" {
				var err error
				if token, err = s.sessionCookie(c.Request()); err != nil {
					return err
				}
				fromCookie = token != ""
			}
			if token == "" {
				return errkind.Unauthorizedf("send Authorization: Bearer <token>, or log in (POST /v1/login, or POST /v1/web/session in a browser)")
			}
			p, err := s.auth.Authenticate(c.Request().Context(), token)
			if err != nil {
				return err
			}
			if len(kinds) > 0 && !kindIn(p.Kind, kinds) {
				return errkind.Forbiddenf("this needs a %s account", kinds[0])
			}
			c.Set(principalKey, p)
			c.Set(credentialKey, credential{token: token, fromCookie: fromCookie})
			return next(c)
		}
	}
}

// principalOf is the Principal the authentication ring verified.
func principalOf(c echo.Context) auth.Principal {
	p, _ := c.Get(principalKey).(auth.Principal)
	return p
}

func bearerToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

func kindIn(k auth.Kind, kinds []auth.Kind) bool {
	for _, want := range kinds {
		if k == want {
			return true
		}
	}
	return false
}
