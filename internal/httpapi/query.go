package httpapi

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// pageLimit reads the limit query parameter of a paged list: 0 when it is
// absent (the list's default), else a whole number from 1 to most, or a 400.
func pageLimit(c echo.Context, most int) (int, error) {
	raw := c.QueryParam("limit")
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > most {
		return 0, errkind.Invalidf("limit must be a whole number from 1 to %d", most)
	}
	return n, nil
}

// queryBool reads a true/false query parameter; absent is false.
func queryBool(c echo.Context, name string) (bool, error) {
	switch c.QueryParam(name) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, errkind.Invalidf("%s must be true or false", name)
}
