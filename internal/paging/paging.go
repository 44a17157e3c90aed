// Package paging is how Stagedoor's lists are read a page at a time: a page
// holds at most a limit of items, and the place of its last item, a time and
// an id (every such list is ordered by the two), is the cursor its client sends
// back, opaque (the after of the next request), to read the page that follows.
// A store reads one more item than the limit to tell whether a next page
// exists (Cut). The public event list and the organizer's orders page so.
package paging

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// The sizes of a page: how many items when the client does not say, and the
// most it may ask for.
const (
	DefaultSize = 50
	MaxSize     = 100
)

// Cursor is a place in a list: the time and id of the item a page ended on.
type Cursor struct {
	At time.Time
	ID string
}

// String encodes the cursor for a client, who keeps it as an opaque token.
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.At.UTC().Format(time.RFC3339Nano) + "_" + c.ID))
}

// maxCursorLength bounds a cursor as sent (docs/openapi.yaml's after).
const maxCursorLength = 128

// Parse decodes a cursor a client sent back as after, or returns an
// errkind.Invalid error.
func Parse(after string) (Cursor, error) {
	bad := errkind.Invalidf("after must be the next_after of an earlier page")
	if len(after) > maxCursorLength {
		return Cursor{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(after)
	if err != nil {
		return Cursor{}, bad
	}
	at, id, ok := strings.Cut(string(raw), "_")
	if !ok {
		return Cursor{}, bad
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return Cursor{}, bad
	}
	if id, ok = ids.Parse(id); !ok {
		return Cursor{}, bad
	}
	return Cursor{At: t, ID: id}, nil
}

// Limit is the size of a page a client asked for: DefaultSize for 0, else
// limit itself when it is 1 to MaxSize; otherwise an errkind.Invalid error.
func Limit(limit int) (int, error) {
	if limit == 0 {
		return DefaultSize, nil
	}
	if limit < 1 || limit > MaxSize {
		return 0, errkind.Invalidf("limit must be 1 to %d", MaxSize)
	}
	return limit, nil
}

// Cut is the page of items, read one more than limit: the first limit of them,
// and the cursor of the next page, where the last of those is (place says
// where an item is), or "" when there is no next page.
func Cut[T any](items []T, limit int, place func(T) Cursor) ([]T, string) {
	if len(items) <= limit {
		return items, ""
	}
	return items[:limit], place(items[limit-1]).String()
}
