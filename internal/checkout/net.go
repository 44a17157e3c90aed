package checkout

import (
	"errors"
	"syscall"
)

// isRefused reports whether a request failed before reaching Payrail at all.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
