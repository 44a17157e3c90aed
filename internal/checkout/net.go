package checkout

import (
	"errors"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"syscall"
)

// A refused connection proves that Payrail never saw a request only when no
// try of it ever had a connection. Go's transport resends a request it deems
// replayable (one with an Idempotency-Key and a body it can rewind) on a new
// connection when a reused keep-alive connection dies before the answer's
// first byte (isReplayable, shouldRetryRequest in net/http): the first try may
// have been written, read and charged by a Payrail that died before it
// answered, and the resend is then refused by the dead Payrail. So every try
// is traced, and a refusal means "not charged" only when none of them got a
// connection to write on.

// tracked returns req traced so that its reached reports whether any try of
// it (the transport's silent resends included) got a connection, and so may
// have been written to Payrail.
func tracked(req *http.Request) (_ *http.Request, reached func() bool) {
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	return req.WithContext(httptrace.WithClientTrace(req.Context(), trace)), connected.Load
}

// isRefused reports whether a request failed because its connection was
// refused: on its own this does not say that an earlier try of the same
// request never reached Payrail (see tracked).
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
