package httpapi

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/errkind"
)

type scannerKeyRequest struct {
	Label   string `json:"label"`
	EventID string `json:"event_id"`
}

type scannerKeyJSON struct {
	ID        string     `json:"id"`
	Label     string     `json:"label"`
	EventID   *string    `json:"event_id"` // null when the key is not bound to an event
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

func scannerKeyOut(k auth.ScannerKey) scannerKeyJSON {
	out := scannerKeyJSON{ID: k.ID, Label: k.Label, CreatedAt: k.CreatedAt.UTC()}
	if k.EventID != "" {
		out.EventID = &k.EventID
	}
	if k.RevokedAt != nil {
		revoked := k.RevokedAt.UTC()
		out.RevokedAt = &revoked
	}
	return out
}

// createScannerKey serves POST /v1/scanner-keys (organizer). The key is in this
// response only: it is stored as its SHA-256, never logged, never listed.
func (s *Server) createScannerKey(c echo.Context) error {
	var in scannerKeyRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	k, err := s.auth.CreateScannerKey(c.Request().Context(), principalOf(c).AccountID, in.Label, in.EventID)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, struct {
		scannerKeyJSON
		Key string `json:"key"`
	}{scannerKeyOut(k.ScannerKey), k.Key})
}

// listScannerKeys serves GET /v1/scanner-keys (organizer): the organizer's
// keys, revoked ones included, without the keys themselves.
func (s *Server) listScannerKeys(c echo.Context) error {
	keys, err := s.auth.ScannerKeys(c.Request().Context(), principalOf(c).AccountID)
	if err != nil {
		return err
	}
	out := make([]scannerKeyJSON, 0, len(keys))
	for _, k := range keys {
		out = append(out, scannerKeyOut(k))
	}
	return c.JSON(http.StatusOK, map[string]any{"scanner_keys": out})
}

// revokeScannerKey serves DELETE /v1/scanner-keys/{id} (its organizer): the key
// stops working at once on every instance. Revoking it again is 204 too.
func (s *Server) revokeScannerKey(c echo.Context) error {
	if err := s.auth.RevokeScannerKey(c.Request().Context(), principalOf(c).AccountID, c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// authenticateScanner is the authentication ring of the scanner routes: the
// X-Api-Key header's scanner key, looked up in PostgreSQL on every request (so
// a revocation is seen by every instance at once), becomes a Scanner Principal.
func (s *Server) authenticateScanner() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			key := strings.TrimSpace(c.Request().Header.Get("X-Api-Key"))
			if key == "" {
				return errkind.Unauthorizedf("send X-Api-Key: <scanner key>")
			}
			p, err := s.auth.AuthenticateScannerKey(c.Request().Context(), key)
			if errors.Is(err, errkind.Unauthorized) {
				return errkind.Unauthorizedf("the scanner key is unknown, malformed or revoked")
			}
			if err != nil {
				return err
			}
			c.Set(principalKey, p)
			return next(c)
		}
	}
}
