package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/limitadmin"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// adminOnly is the ring of the admin routes: with no STAGEDOOR_ADMIN_TOKEN the
// admin API is off and its routes answer 404 as if they did not exist; otherwise
// the bearer token must be the admin token, else 401. The tokens are compared as
// SHA-256 digests in constant time, so neither their content nor their length
// shows in the time taken.
func (s *Server) adminOnly() echo.MiddlewareFunc {
	configured := s.config.AdminToken != ""
	want := sha256.Sum256([]byte(s.config.AdminToken))
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !configured || s.settings == nil {
				return &Problem{Slug: "not-found", Status: http.StatusNotFound, Detail: "no route matches this path"}
			}
			token := bearerToken(c.Request())
			if token == "" {
				return errkind.Unauthorizedf("send Authorization: Bearer <admin token>")
			}
			got := sha256.Sum256([]byte(token))
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				return errkind.Unauthorizedf("the admin token is not right")
			}
			return next(c)
		}
	}
}

// limitSettingJSON is one limit as GET and PUT /v1/admin/limits show it: a
// token bucket with its numbers, or a switch (a concurrency limit, a shedder)
// with its mode.
type limitSettingJSON struct {
	Name        ratelimit.Name  `json:"name"`
	Kind        limitadmin.Kind `json:"kind"`
	Rate        int             `json:"rate,omitempty"`
	PeriodMS    int64           `json:"period_ms,omitempty"`
	Burst       int             `json:"burst,omitempty"`
	MaxInFlight int             `json:"max_in_flight,omitempty"`
	Mode        ratelimit.Mode  `json:"mode"`
	UpdatedAt   *time.Time      `json:"updated_at,omitempty"`
	UpdatedBy   string          `json:"updated_by"`
}

func limitSettingOf(st limitadmin.Stored) limitSettingJSON {
	out := limitSettingJSON{
		Name:        st.Name,
		Kind:        st.Kind,
		Rate:        st.Setting.Limit.Rate,
		PeriodMS:    st.Setting.Limit.Period.Milliseconds(),
		Burst:       st.Setting.Limit.Burst,
		MaxInFlight: st.MaxInFlight,
		Mode:        st.Setting.Mode,
		UpdatedBy:   st.UpdatedBy,
	}
	if !st.UpdatedAt.IsZero() {
		at := st.UpdatedAt.UTC()
		out.UpdatedAt = &at
	}
	return out
}

// listLimits serves GET /v1/admin/limits: the stored setting of every limit, in
// the order of internal/limits.All.
func (s *Server) listLimits(c echo.Context) error {
	stored, err := s.settings.List(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]limitSettingJSON, 0, len(stored))
	for _, st := range stored {
		out = append(out, limitSettingOf(st))
	}
	return c.JSON(http.StatusOK, out)
}

// limitChangeRequest is the body of PUT /v1/admin/limits/{name}; a field left
// out keeps its stored value, except mode, which is required.
type limitChangeRequest struct {
	Mode     string `json:"mode"`
	Rate     *int   `json:"rate"`
	PeriodMS *int64 `json:"period_ms"`
	Burst    *int   `json:"burst"`
}

// putLimit serves PUT /v1/admin/limits/{name}: it stores the new setting, which
// this instance applies at once and every other within 2 seconds.
func (s *Server) putLimit(c echo.Context) error {
	var in limitChangeRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	st, err := s.settings.Update(c.Request().Context(), ratelimit.Name(c.Param("name")), limitadmin.Change{
		Mode: in.Mode, Rate: in.Rate, PeriodMS: in.PeriodMS, Burst: in.Burst,
	}, limitadmin.Actor{
		Principal: "admin",
		RequestID: requestID(c),
		Address:   clientAddr(c.Request(), s.config.TrustedProxies).String(),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, limitSettingOf(st))
}
