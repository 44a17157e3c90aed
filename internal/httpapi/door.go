package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// The door, offline: what a scanner device fetches to check tickets without
// the server (the events' public keys, the revocations), and where it uploads
// the scans it made meanwhile. All behind X-Api-Key, like POST /v1/scans.

// scannerOf is the Scanner of the scanner key that authenticated the request.
func scannerOf(c echo.Context) scan.Scanner {
	p := principalOf(c)
	sc := scan.Scanner{KeyID: p.ScannerKeyID, OrganizerID: p.AccountID, EventID: p.EventID}
	if at, ok := c.Get(keyRevokedAtKey).(time.Time); ok {
		sc.KeyRevokedAt = &at
	}
	return sc
}

const keyRevokedAtKey = "scanner_key_revoked_at"

// authenticateUploader is the authentication ring of POST /v1/scans/batch: a
// live scanner key as authenticateScanner has it, or else a revoked one, with
// its revocation time, so that the scans its device made before it was
// revoked are not lost (scan.Service.Upload hears only those). Every other
// route refuses a revoked key.
func (s *Server) authenticateUploader() echo.MiddlewareFunc {
	live := s.authenticateScanner()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		asLive := live(next)
		return func(c echo.Context) error {
			err := asLive(c)
			if !errors.Is(err, errkind.Unauthorized) || c.Get(principalKey) != nil {
				return err // answered, or refused by the handler itself
			}
			key := strings.TrimSpace(c.Request().Header.Get("X-Api-Key"))
			p, revokedAt, rerr := s.auth.RevokedScannerKey(c.Request().Context(), key)
			if errors.Is(rerr, errkind.Unauthorized) {
				return err // unknown, malformed or absent: the live ring's 401
			}
			if rerr != nil {
				return rerr
			}
			c.Set(principalKey, p)
			c.Set(keyRevokedAtKey, revokedAt)
			return next(c)
		}
	}
}

type keysetKeyJSON struct {
	EventID   string `json:"event_id"`
	Algorithm string `json:"alg"`
	PublicKey string `json:"public_key"` // 32 bytes, base64url without padding
}

// keyset serves GET /v1/scanner/keyset: the public keys of the events the key
// may admit (its event when bound, else its organizer's events): with them a
// device verifies signed ticket codes offline.
func (s *Server) keyset(c echo.Context) error {
	sc := scannerOf(c)
	eventIDs := []string{sc.EventID}
	if sc.EventID == "" {
		events, err := s.events.ListByOrganizer(c.Request().Context(), sc.OrganizerID)
		if err != nil {
			return err
		}
		eventIDs = eventIDs[:0]
		for _, e := range events {
			eventIDs = append(eventIDs, e.ID)
		}
	}
	keys, err := s.ticketKeys.Public(c.Request().Context(), eventIDs)
	if err != nil {
		return err
	}
	out := make([]keysetKeyJSON, 0, len(keys))
	for _, k := range keys {
		out = append(out, keysetKeyJSON{EventID: k.EventID, Algorithm: "Ed25519",
			PublicKey: base64.RawURLEncoding.EncodeToString(k.Key)})
	}
	return c.JSON(http.StatusOK, map[string]any{"event_id": nullable(sc.EventID), "keys": out})
}

// revocationsPage is the most revocations one answer lists.
const revocationsPage = 1000

// revocations serves GET /v1/scanner/revocations?after=N: the tickets revoked
// since the revocation numbered N (0: all), that the key may admit; a device
// asks again with next_after until the list is empty.
func (s *Server) revocations(c echo.Context) error {
	var after int64
	if raw := c.QueryParam("after"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			return errkind.Invalidf("after must be the next_after of an earlier answer (a whole number)")
		}
		after = n
	}
	list, err := s.scans.Revocations(c.Request().Context(), scannerOf(c), after, revocationsPage)
	if err != nil {
		return err
	}
	type revocationJSON struct {
		TicketID  string    `json:"ticket_id"`
		EventID   string    `json:"event_id"`
		RevokedAt time.Time `json:"revoked_at"`
	}
	out := make([]revocationJSON, 0, len(list))
	next := after
	for _, r := range list {
		out = append(out, revocationJSON{TicketID: r.TicketID, EventID: r.EventID, RevokedAt: r.RevokedAt.UTC()})
		next = r.ID
	}
	return c.JSON(http.StatusOK, map[string]any{"revocations": out, "next_after": strconv.FormatInt(next, 10)})
}

// listedPage is the most tickets one answer of the offline list holds.
const listedPage = 1000

// listedTickets serves GET /v1/scanner/tickets?after=: the tickets that admit
// of the events the key may admit (its event when bound), with their
// references and seats, a page by ticket id; a device asks again with
// next_after until the list is empty, and reads it all again now and then. With
// it a reference typed at the door is checked offline (the revocations stop
// what it listed).
func (s *Server) listedTickets(c echo.Context) error {
	list, err := s.scans.Listed(c.Request().Context(), scannerOf(c), c.QueryParam("after"), listedPage)
	if err != nil {
		return err
	}
	type listedJSON struct {
		TicketID  string          `json:"ticket_id"`
		EventID   string          `json:"event_id"`
		Reference string          `json:"reference"`
		Seat      scannedSeatJSON `json:"seat"`
	}
	out := make([]listedJSON, 0, len(list))
	next := c.QueryParam("after")
	for _, l := range list {
		out = append(out, listedJSON{TicketID: l.TicketID, EventID: l.EventID, Reference: l.Reference, Seat: seatJSONOf(l.Seat)})
		next = l.TicketID
	}
	return c.JSON(http.StatusOK, map[string]any{"tickets": out, "next_after": next})
}

type uploadRequest struct {
	Scans []struct {
		DeviceScanID string  `json:"device_scan_id"`
		Code         string  `json:"code"`
		ScannedAt    rfc3339 `json:"scanned_at"`
		Offline      bool    `json:"offline"`
	} `json:"scans"`
}

// settledJSON is one uploaded scan's result.
type settledJSON struct {
	DeviceScanID   string      `json:"device_scan_id"`
	Result         scan.Result `json:"result"`
	TicketID       *string     `json:"ticket_id"`
	FirstScannedAt *time.Time  `json:"first_scanned_at"`
	Replayed       bool        `json:"replayed"`
}

// uploadScans serves POST /v1/scans/batch: a device's scans made while the
// server was out of reach, admitted offline or queued, settled in the order
// the device made them (scan.Service.Upload). Each scan is one token of
// scanner-key, as a scan online is: the route's ring took the first, and the
// others are taken as the scans are settled. When the bucket runs out, the
// answer lists the scans settled so far, and the device uploads the others
// later.
func (s *Server) uploadScans(c echo.Context) error {
	var in uploadRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	scans := make([]scan.DeviceScan, len(in.Scans))
	for i, d := range in.Scans {
		scans[i] = scan.DeviceScan{DeviceScanID: d.DeviceScanID, Code: d.Code, ScannedAt: d.ScannedAt.Time, Offline: d.Offline}
	}
	check := ratelimit.Check{Limit: limits.ScannerKey, Key: scannerKeyKey(c)}
	paid := true // the ring's token
	spend := func(context.Context) error {
		if paid {
			paid = false
			return nil
		}
		return s.enforce(c, check)
	}
	settled, err := s.scans.Upload(c.Request().Context(), scannerOf(c), scans, spend)
	if err != nil {
		return err
	}
	out := make([]settledJSON, len(settled))
	for i, st := range settled {
		out[i] = settledJSON{DeviceScanID: st.DeviceScanID, Result: st.Result, TicketID: nullable(st.TicketID),
			FirstScannedAt: utc(st.FirstScannedAt), Replayed: st.Replayed}
	}
	return c.JSON(http.StatusOK, map[string]any{"results": out})
}

// revokeTicket serves DELETE /v1/organizer/tickets/{id} (its organizer): the
// ticket admits no one from now on. Revoking it again is 204 too.
func (s *Server) revokeTicket(c echo.Context) error {
	if err := s.scans.Revoke(c.Request().Context(), principalOf(c).AccountID, c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// nullable is s, or nil when empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
