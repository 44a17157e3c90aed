package errkind_test

import (
	"errors"
	"fmt"
	"io"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

func Example() {
	err := errkind.Invalidf("seat_ids must list 1 to %d seats; it lists %d", 10, 12)
	fmt.Println(err)
	fmt.Println(errors.Is(err, errkind.Invalid), errors.Is(err, errkind.NotFound))

	// A message may wrap an error, which stays matchable.
	wrapped := errkind.Unavailablef("the ledger did not answer: %w", io.ErrUnexpectedEOF)
	fmt.Println(errors.Is(wrapped, errkind.Unavailable), errors.Is(wrapped, io.ErrUnexpectedEOF))
	// Output:
	// seat_ids must list 1 to 10 seats; it lists 12
	// true false
	// true true
}
