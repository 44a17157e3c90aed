package httpapi

import (
	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/limits"
)

// The keys of the protections, one function for each identity a protection
// of internal/limits is keyed on (its Key), so that a bucket's key is written
// in one place whichever ring or handler decides it.

// ringKey is how a ring keys a protection on what the request names before
// its body: its client address, its principal, its route's event.
func (s *Server) ringKey(key limits.Key) func(c echo.Context) (string, error) {
	switch key {
	case limits.ByAddress:
		return func(c echo.Context) (string, error) { return s.clientAddressKey(c), nil }
	case limits.ByBuyer, limits.ByOrganizer, limits.ByAccount:
		return func(c echo.Context) (string, error) { return principalOf(c).AccountID, nil }
	case limits.ByScannerKey:
		return func(c echo.Context) (string, error) { return scannerKeyKey(c), nil }
	case limits.ByBuyerAndEvent:
		// An unknown event, or one without a waiting room, is refused first
		// and spends no token.
		return func(c echo.Context) (string, error) {
			ev, err := s.roomEvent(c)
			if err != nil {
				return "", err
			}
			return buyerAndEventKey(principalOf(c).AccountID, ev.ID), nil
		}
	}
	panic("httpapi: a ring cannot key on " + string(key))
}

// clientAddressKey is the key of limits.ByAddress: the client's address (behind
// trusted proxies, the address they saw).
func (s *Server) clientAddressKey(c echo.Context) string {
	return addressKey(clientAddr(c.Request(), s.config.TrustedProxies))
}

// scannerKeyKey is the key of limits.ByScannerKey: the id of the door
// device's key, not its address (a venue's phones share one Wi-Fi address and
// must not share one bucket).
func scannerKeyKey(c echo.Context) string { return principalOf(c).ScannerKeyID }

// buyerAndEventKey is the key of limits.ByBuyerAndEvent.
func buyerAndEventKey(buyer, eventID string) string { return buyer + ":" + eventID }

// buyerAndHoldKey is the key of limits.ByBuyerAndHold.
func buyerAndHoldKey(buyer, holdID string) string { return buyer + "/" + holdID }
